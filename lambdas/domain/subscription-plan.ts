/**
 * The plan of an endpoint change's subscription item writes (docs/architecture.md#subscriptions):
 * which items to put and delete, in transactions small enough for DynamoDB. No I/O.
 */

/** The subscription-relevant state of an endpoint: what its subscription items copy. */
export interface SubscriptionState {
  readonly eventTypes: readonly string[];
  readonly enabled: boolean;
}

/** One subscription item write: a put (with the endpoint's `enabled` copy) or a delete. */
export interface SubscriptionOp {
  readonly eventType: string;
  readonly kind: 'put' | 'delete';
  readonly enabled: boolean;
}

/**
 * One transaction of an endpoint change: the subscription writes, and the endpoint's state once
 * they are written (null: the endpoint is deleted by this step).
 */
export interface SubscriptionStep {
  readonly ops: SubscriptionOp[];
  readonly state: SubscriptionState | null;
}

/** DynamoDB's limit of items in one transaction. */
export const MAX_TRANSACTION_ITEMS = 100;

/**
 * Subscription writes per transaction: the limit less what an endpoint write adds besides them
 * (the endpoint item, the grace entry, the workspace counter, the audit event, its domain event's
 * outbox item, and on a delete the purge job that removes its history).
 */
export const SUBSCRIPTION_OPS_PER_STEP = MAX_TRANSACTION_ITEMS - 6;

/**
 * The transactions that take an endpoint from `from` (null: it does not exist yet) to `to` (null:
 * it is deleted), each with at most `perStep` subscription writes (docs/architecture.md#subscriptions).
 * One step whenever the change fits (any endpoint of up to 95 event types). A larger change runs in
 * steps that each leave the endpoint item and its subscription items agreeing on the event types:
 * removals first, then the `enabled` copies of the kept types (when `rewriteEnabled`, or when the
 * flag changes), then additions. The endpoint is disabled in the first step and enabled in the
 * last, so between steps a subscription item may say enabled for a disabled endpoint (its event
 * is then queued and closed by the dispatcher as `endpoint_disabled`), never the reverse, which
 * would hold an enabled endpoint's event. Pure.
 */
export function planSubscriptionSteps(
  from: SubscriptionState | null,
  to: SubscriptionState | null,
  options: { rewriteEnabled: boolean; perStep?: number },
): SubscriptionStep[] {
  const perStep = options.perStep ?? SUBSCRIPTION_OPS_PER_STEP;
  const before = from?.eventTypes ?? [];
  const after = to?.eventTypes ?? [];
  const enabled = to?.enabled ?? from?.enabled ?? false;
  const removed = before.filter((t) => !after.includes(t));
  const added = after.filter((t) => !before.includes(t));
  const rewrite = from !== null && to !== null && (options.rewriteEnabled || from.enabled !== to.enabled);
  const kept = rewrite ? before.filter((t) => after.includes(t)) : [];
  const ops: SubscriptionOp[] = [
    ...removed.map((eventType) => ({ eventType, kind: 'delete' as const, enabled })),
    ...kept.map((eventType) => ({ eventType, kind: 'put' as const, enabled })),
    ...added.map((eventType) => ({ eventType, kind: 'put' as const, enabled })),
  ];
  const chunks: SubscriptionOp[][] = [];
  for (let i = 0; i < ops.length; i += perStep) chunks.push(ops.slice(i, i + perStep));
  if (chunks.length === 0) chunks.push([]);
  let types = [...before];
  return chunks.map((chunk, i) => {
    const last = i === chunks.length - 1;
    if (last) return { ops: chunk, state: to };
    for (const op of chunk) {
      if (op.kind === 'delete') types = types.filter((t) => t !== op.eventType);
      else if (!types.includes(op.eventType)) types.push(op.eventType);
    }
    // Disabling: from the first step on; enabling: only in the last (see above).
    const stepEnabled = from === null || to === null ? enabled : to.enabled ? from.enabled : false;
    return { ops: chunk, state: { eventTypes: [...types], enabled: stepEnabled } };
  });
}
