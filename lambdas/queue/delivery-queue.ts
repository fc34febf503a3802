/**
 * The delivery queue port (docs/architecture.md#queue-messages): messages carry ids, not payloads.
 * SQS in the cloud, an in-process queue with SQS semantics locally.
 */
import { idPattern } from '../contract/ids';

/**
 * The dispatcher's consumption of the delivery queue, read by the CDK event
 * source and the local stack's in-process queue alike: batches of 25 gathered
 * for at most 1 s, at most 4 batches at once, a 30 s function timeout and a
 * visibility timeout six times that (Lambda's SQS guidance), so a batch still
 * being processed is never handed out twice.
 */
export const DISPATCHER_CONSUMER = { batchSize: 25, maxBatchingWindowSeconds: 1, maxConcurrency: 4, timeoutSeconds: 30, visibilityTimeoutSeconds: 6 * 30 } as const;

/** The dead-letter consumer's batches. */
export const DEAD_LETTER_CONSUMER = { batchSize: 10 } as const;

/** One queued delivery. */
export interface DeliveryMessage {
  readonly deliveryId: string;
}

/** Sends delivery messages. */
export interface DeliveryQueue {
  /** Enqueues messages (batched by the adapter). */
  send(messages: readonly DeliveryMessage[]): Promise<void>;
}

/** Delays the next receive of a received message (the retry backoff: SQS ChangeMessageVisibility). */
export interface MessageDelayer {
  delay(receiptHandle: string, seconds: number): Promise<void>;
}

const DELIVERY_ID = idPattern('whd');

/** Parses a message body; null when it is not a delivery message. */
export function parseDeliveryMessage(body: string): DeliveryMessage | null {
  try {
    const value = JSON.parse(body) as { deliveryId?: unknown };
    return typeof value?.deliveryId === 'string' && DELIVERY_ID.test(value.deliveryId) ? { deliveryId: value.deliveryId } : null;
  } catch {
    return null;
  }
}
