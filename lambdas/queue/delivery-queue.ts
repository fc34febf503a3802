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

/**
 * The slow lane's consumption (docs/behaviour.md#delivery-lanes): batches of 10, with no batching
 * window (Lambda requires one only above 10), at most 4 batches at once. A batch there waits for
 * its slowest receiver (up to the 10 s deadline), so it is small, and each batch attempts only a
 * few deliveries per endpoint and workspace (lambdas/domain/delivery-lanes.ts).
 */
export const SLOW_LANE_CONSUMER = { batchSize: 10, maxBatchingWindowSeconds: 0, maxConcurrency: 4, timeoutSeconds: 30, visibilityTimeoutSeconds: 6 * 30 } as const;

/** The dead-letter consumer's batches. */
export const DEAD_LETTER_CONSUMER = { batchSize: 10 } as const;

/**
 * One queued delivery. The endpoint and workspace ride along (ids only) so a slow-lane batch can
 * cap them before reading anything; a message without them (older ones, replays) is still valid.
 */
export interface DeliveryMessage {
  readonly deliveryId: string;
  readonly endpointId?: string;
  readonly workspace?: string;
  /** Seconds before the message is first received (SQS DelaySeconds, at most 900). @default 0 */
  readonly delaySeconds?: number;
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

/** SQS's longest DelaySeconds. */
export const MAX_DELAY_SECONDS = 900;

/** The body of a message: ids only, never a payload. */
export function deliveryMessageBody(m: DeliveryMessage): string {
  return JSON.stringify({ deliveryId: m.deliveryId, ...(m.endpointId && m.workspace ? { endpointId: m.endpointId, workspace: m.workspace } : {}) });
}

/** A message's delay, as SQS takes it: whole seconds from 0 to {@link MAX_DELAY_SECONDS}. */
export function messageDelay(m: DeliveryMessage): number {
  return Math.min(Math.max(0, Math.round(m.delaySeconds ?? 0)), MAX_DELAY_SECONDS);
}

const DELIVERY_ID = idPattern('whd');
const ENDPOINT_ID = idPattern('whe');
/** A workspace slug's shape (the contract's SlugSchema, without importing zod into the dispatcher). */
const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Parses a message body; null when it is not a delivery message. */
export function parseDeliveryMessage(body: string): DeliveryMessage | null {
  try {
    const value = JSON.parse(body) as { deliveryId?: unknown; endpointId?: unknown; workspace?: unknown };
    if (typeof value?.deliveryId !== 'string' || !DELIVERY_ID.test(value.deliveryId)) return null;
    const addressed = typeof value.endpointId === 'string' && ENDPOINT_ID.test(value.endpointId) && typeof value.workspace === 'string' && SLUG.test(value.workspace);
    return addressed ? { deliveryId: value.deliveryId, endpointId: value.endpointId as string, workspace: value.workspace as string } : { deliveryId: value.deliveryId };
  } catch {
    return null;
  }
}
