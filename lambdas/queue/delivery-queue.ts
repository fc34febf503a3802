/**
 * The delivery queue port (DESIGN §5): messages carry ids, not payloads.
 * SQS in the cloud, an in-process queue with SQS semantics locally.
 */

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

/** Parses a message body; null when it is not a delivery message. */
export function parseDeliveryMessage(body: string): DeliveryMessage | null {
  try {
    const value = JSON.parse(body) as { deliveryId?: unknown };
    return typeof value?.deliveryId === 'string' && /^whd_[0-9A-HJKMNP-TV-Z]{26}$/.test(value.deliveryId) ? { deliveryId: value.deliveryId } : null;
  } catch {
    return null;
  }
}
