/**
 * The dead-letter consumer (docs/behaviour.md#dead-lettering): a delivery whose retries
 * are exhausted becomes `dead_lettered` by terminal bookkeeping (no HTTP
 * attempt, last HTTP evidence kept, streak untouched, an operator's re-enable
 * untouched), then a workspace Notification is recorded, best effort. One whose message the
 * queue gave up while it still had retries (receives, not attempts) is sent back instead, a
 * bounded number of times, and marked only after that.
 */
import type { SQSRecord } from 'aws-lambda';
import type { HealthObservation } from '../domain/delivery-health';
import { derivedId } from '../domain/ids';
import { bookkeepingEntry, deadLetterVerdict, isTerminal, type DeliveryRecord } from '../domain/delivery-lifecycle';
import { redactUrl } from '../domain/url-redaction';
import { MAX_DELAY_SECONDS, parseDeliveryMessage, type DeliveryQueue } from '../queue/delivery-queue';
import type { TableContext } from '../store/client';
import { readDelivery, recordObservation } from '../store/deliveries';
import { getEndpointRecord } from '../store/endpoints';
import { putNotification } from '../store/notifications';
import { healthObservation } from './batch-health';
import { secondsUntil } from './delivery-decision';
import type { BatchConsumer, BatchRun, ConsumerLog } from './sqs-batch';

/** Adapters of the dead-letter consumer. */
export interface DeadLetterDeps {
  readonly table: TableContext;
  readonly now: () => Date;
  /** The local stack's time scale, so a requeue waits the scaled time left (docs/architecture.md#the-local-stack). @default 1 */
  readonly timeScale?: number;
}

/**
 * What became of a dead letter:
 * - `dead_lettered`: marked; `recorded` is the marking as the batch's health counts see it
 *   (docs/behaviour.md#endpoint-health);
 * - `requeue`: it still has retries and its message has been given up fewer than
 *   `MAX_REQUEUES` times (lambdas/domain/delivery-lifecycle.ts): the caller sends it back to the delivery queue, due in
 *   `delaySeconds` (its next attempt, within SQS's longest delay), nothing written;
 * - `ignored`: gone or already terminal.
 */
export type DeadLetterResult =
  | { kind: 'dead_lettered'; delivery: DeliveryRecord; recorded: HealthObservation }
  | { kind: 'requeue'; delaySeconds: number; delivery: DeliveryRecord }
  | { kind: 'ignored'; reason: string };

/**
 * Handles one dead letter of `deliveryId`, whose message had been sent back `requeues` times
 * already (its `requeues` field): marks it, or asks for a requeue (see {@link DeadLetterResult}).
 */
export async function deadLetterDelivery(deps: DeadLetterDeps, deliveryId: string, requeues = 0): Promise<DeadLetterResult> {
  const read = await readDelivery(deps.table, deliveryId);
  if (!read) return { kind: 'ignored', reason: 'delivery_gone' };
  let delivery = read.record;
  if (read.unapplied) {
    // The last receive wrote its attempt and ended before the state caught up: complete it first.
    const { ordinal: _ordinal, ...attempt } = read.unapplied.attempt;
    const endpoint = await getEndpointRecord(deps.table, delivery.workspace, delivery.endpointId);
    const applied = await recordObservation(deps.table, { delivery, endpoint, attempt, ...read.unapplied.applies }, deps.now(), {
      attemptWritten: true,
    });
    // A streak moved meanwhile, or another consumer applied it: the message comes back and this starts over.
    if (applied.kind !== 'recorded') throw new Error(`${deliveryId}: its last attempt could not be applied yet (${applied.kind})`);
    delivery = applied.delivery;
  }
  if (isTerminal(delivery.status)) {
    // A retry after the marking committed (a lost answer, a crash): the notification may be missing.
    if (delivery.status === 'dead_lettered') await notifyDeadLettered(deps, delivery);
    return { kind: 'ignored', reason: 'already_terminal' };
  }
  const now = deps.now();
  const verdict = deadLetterVerdict(delivery, requeues);
  if (verdict.kind === 'requeue') {
    return {
      kind: 'requeue',
      delaySeconds: Math.min(secondsUntil(delivery.nextAttemptAt, now, deps.timeScale), MAX_DELAY_SECONDS),
      delivery,
    };
  }
  const entry = bookkeepingEntry(now, 'dead_lettered', verdict.reason);
  const outcome = await recordObservation(
    deps.table,
    {
      delivery,
      endpoint: null,
      attempt: entry,
      status: 'dead_lettered',
      http: false,
      nextAttemptAt: null,
      streak: 'none',
    },
    now,
  );
  if (outcome.kind !== 'recorded') return { kind: 'ignored', reason: 'duplicate' };
  await notifyDeadLettered(deps, outcome.delivery);
  return { kind: 'dead_lettered', delivery: outcome.delivery, recorded: healthObservation(delivery, false, entry) };
}

/** Adapters of the dead-letter consumer's batches. */
interface DeadLetterBatchAdapters {
  /** The consumer's adapters, for one record. */
  readonly deps: () => DeadLetterDeps;
  /** Where a delivery that still has retries goes back to: the fast lane, which moves it on if its endpoint is slow. */
  readonly deliveries: DeliveryQueue;
  readonly log: ConsumerLog;
}

/**
 * The dead-letter queue's batches: each record is handled by {@link deadLetterDelivery}; a
 * delivery that still has retries is sent back to the delivery queue as a new message with its
 * requeue count raised; a marking counts in the batch's health and as a `dead_lettered` attempt.
 */
export function deadLetterBatch(adapters: DeadLetterBatchAdapters): BatchConsumer {
  return async (_records, run) => (record) => consumeDeadLetter(adapters, record, run);
}

async function consumeDeadLetter(adapters: DeadLetterBatchAdapters, record: SQSRecord, run: BatchRun): Promise<void> {
  const { log } = adapters;
  const message = parseDeliveryMessage(record.body);
  if (!message) {
    log.error('Dropped a dead letter that is not a delivery', { messageId: record.messageId });
    return;
  }
  const requeues = message.requeues ?? 0;
  const result = await deadLetterDelivery(adapters.deps(), message.deliveryId, requeues);
  if (result.kind === 'requeue') {
    const { delivery } = result;
    // A new message: its receive count starts again. A failed send fails the record, and the dead letter comes back.
    await adapters.deliveries.send([
      {
        deliveryId: delivery.deliveryId,
        endpointId: delivery.endpointId,
        workspace: delivery.workspace,
        requeues: requeues + 1,
        delaySeconds: result.delaySeconds,
      },
    ]);
    log.warn('Dead letter with retries left sent back to the delivery queue', {
      deliveryId: message.deliveryId,
      requeues: requeues + 1,
      attempts: delivery.attempts,
      status: delivery.status,
    });
    return;
  }
  if (result.kind === 'dead_lettered') {
    run.health.add(result.recorded);
    run.metrics.add('attempts', 1, { outcome: result.recorded.outcome });
  }
  log.info('Dead letter handled', { deliveryId: message.deliveryId, result: result.kind });
}

/** How a dead-lettered delivery ended, in a notification's words. */
function stoppedHow(delivery: DeliveryRecord): string {
  // Never attempted: the queue gave its message up (its last error is the bookkeeping reason).
  if (delivery.attempts === 0) return `stopped before any attempt (${delivery.lastError ?? 'unknown'})`;
  return `stopped after ${delivery.attempts} attempt${delivery.attempts === 1 ? '' : 's'} (last: ${delivery.lastError ?? 'unknown'})`;
}

/**
 * The workspace notification of a dead letter, best effort after persistence
 * (docs/behaviour.md#notifications). Its id is derived from the delivery and the marking time,
 * and the write is put-if-absent, so a retried consumer records it exactly once.
 */
async function notifyDeadLettered(deps: DeadLetterDeps, delivery: DeliveryRecord): Promise<void> {
  const markedAt = new Date(delivery.updatedAt);
  try {
    const endpoint = await getEndpointRecord(deps.table, delivery.workspace, delivery.endpointId);
    await putNotification(
      deps.table,
      delivery.workspace,
      {
        notificationId: derivedId('ntf', markedAt, ['dead-lettered', delivery.deliveryId]),
        kind: 'delivery.dead_lettered',
        // Read-scope callers read notifications: the URL is redacted (docs/behaviour.md#url-redaction).
        message: `Delivery ${delivery.deliveryId} (${delivery.eventType}) to ${endpoint ? redactUrl(endpoint.url) : delivery.endpointId} ${stoppedHow(delivery)}. The endpoint stopped receiving it; replay it once the receiver is fixed.`,
        endpointId: delivery.endpointId,
        deliveryId: delivery.deliveryId,
      },
      markedAt,
    );
  } catch {
    // Best effort: a failed write never undoes the marking.
  }
}
