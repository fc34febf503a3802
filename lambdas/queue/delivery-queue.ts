/**
 * The delivery queue port (docs/architecture.md#queue-messages): messages carry ids, not payloads.
 * SQS in the cloud, an in-process queue with SQS semantics locally.
 */
import { idPattern } from '../contract/ids';

// How the delivery queues are consumed is the deployment contract's (lambdas/contract/deployment.ts).

/**
 * One queued delivery. The endpoint and workspace ride along (ids only) so a slow-lane batch can
 * cap them before reading anything; a message without them (older ones, replays) is still valid.
 */
export interface DeliveryMessage {
  readonly deliveryId: string;
  readonly endpointId?: string;
  readonly workspace?: string;
  /**
   * Times the dead-letter consumer sent this delivery back after the queue gave its message up
   * (docs/behaviour.md#dead-lettering); every re-send of the delivery (a move, a deferral, a retry
   * on a new message) carries it on, so the bound holds across lanes. @default 0
   */
  readonly requeues?: number;
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
  return JSON.stringify({
    deliveryId: m.deliveryId,
    ...(m.endpointId && m.workspace ? { endpointId: m.endpointId, workspace: m.workspace } : {}),
    ...(m.requeues ? { requeues: m.requeues } : {}),
  });
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
    const value = JSON.parse(body) as { deliveryId?: unknown; endpointId?: unknown; workspace?: unknown; requeues?: unknown };
    if (typeof value?.deliveryId !== 'string' || !DELIVERY_ID.test(value.deliveryId)) return null;
    const addressed =
      typeof value.endpointId === 'string' &&
      ENDPOINT_ID.test(value.endpointId) &&
      typeof value.workspace === 'string' &&
      SLUG.test(value.workspace);
    // Older messages have no count: none so far. A count that is not one is ignored the same way.
    const requeues = Number.isSafeInteger(value.requeues) && (value.requeues as number) > 0 ? { requeues: value.requeues as number } : {};
    return addressed
      ? { deliveryId: value.deliveryId, endpointId: value.endpointId as string, workspace: value.workspace as string, ...requeues }
      : { deliveryId: value.deliveryId, ...requeues };
  } catch {
    return null;
  }
}
