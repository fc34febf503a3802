/**
 * The dispatchers' queue policy (docs/architecture.md#retries-and-visibility): how a batch of a
 * delivery lane is planned, and how each record's message is settled from its dispatch's result.
 * A retryable failure delays its message by the backoff and is reported failed; a move sends the
 * message to the slow lane and a spent one to the dead-letter queue, then both are acked. In the
 * slow lane, a batch first defers what is over the per-endpoint and per-workspace caps. Then it
 * claims, per rate-limited endpoint, the sends it needs from the endpoint's rate budget
 * (docs/behaviour.md#delivery-rate-per-endpoint); what it is not granted comes back in a second. Only
 * attempts spend a delivery's retries: a message that is to come back on its queue's last receive
 * (SQS would move it to the dead-letter queue) is re-sent as a new message to its own lane instead.
 */
import type { SQSRecord } from 'aws-lambda';
import type { MetricsRecorder } from '../contract/metrics';
import { selectForAttempt, SLOW_LANE, type LaneRole } from '../domain/delivery-lanes';
import { MAX_RECEIVES } from '../contract/deployment';
import { parseDeliveryMessage, type DeliveryMessage, type DeliveryQueue, type MessageDelayer } from '../queue/delivery-queue';
import type { TableContext } from '../store/client';
import { claimSendBudget } from '../store/rate-budget';
import { OVER_RATE_DELAY_SECONDS, type DispatchResult } from './delivery-decision';
import { dispatchDelivery, endpointReaderForBatch, type DispatchDeps, type EndpointReader, type RateShare } from './dispatcher';
import type { BatchConsumer, BatchRun, ConsumerLog } from './sqs-batch';

/** The queues a dispatcher settles its messages with. */
export interface LaneQueues {
  /** The dispatcher's own queue: re-sends on a message's last receive. */
  readonly ownLane: DeliveryQueue;
  /** Visibility changes of the own queue's messages (the backoff). */
  readonly delayer: MessageDelayer;
  readonly slowLane: DeliveryQueue;
  readonly deadLetters: DeliveryQueue;
}

/** Adapters of a dispatcher's batches. */
interface DispatcherBatchAdapters {
  readonly queues: LaneQueues;
  readonly log: ConsumerLog;
  /** The table the batch's endpoint reader reads. */
  readonly table: () => TableContext;
  /** The dispatch adapters of one record, but its endpoint reader: the batch's. */
  readonly dispatch: () => Omit<DispatchDeps, 'endpoint'>;
}

/** Raised for a record the queue should deliver again later. */
export class RetryLater extends Error {
  override readonly name = 'RetryLater';
}

/** How many times the queue has handed this message out, this receive included. */
export function receiveCountOf(record: Pick<SQSRecord, 'attributes'>): number {
  return Number(record.attributes?.ApproximateReceiveCount ?? '1');
}

/**
 * What the queue is to do with a dispatched message:
 * - `ack`: nothing (the record succeeds, SQS deletes it);
 * - `move`: a new message in the slow lane, due in `delaySeconds`;
 * - `dead_letter`: a new message in the dead-letter queue;
 * - `come_back`: the delivery again in this lane in `delaySeconds` ({@link LaneSettler.comeBack}).
 */
export type Settlement =
  | { readonly kind: 'ack' }
  | { readonly kind: 'move'; readonly message: DeliveryMessage; readonly delaySeconds: number }
  | { readonly kind: 'dead_letter'; readonly message: DeliveryMessage }
  | { readonly kind: 'come_back'; readonly message: DeliveryMessage; readonly delaySeconds: number };

/** The settlement of a dispatch's result for the message it came in. */
export function settlementOf(message: DeliveryMessage, result: DispatchResult): Settlement {
  if (result.kind === 'ack') return { kind: 'ack' };
  const { delivery } = result;
  // The requeue count rides along on every re-send of the delivery (docs/architecture.md#queue-messages).
  const addressed: DeliveryMessage = {
    deliveryId: message.deliveryId,
    endpointId: delivery.endpointId,
    workspace: delivery.workspace,
    ...(message.requeues ? { requeues: message.requeues } : {}),
  };
  if (result.kind === 'dead_letter') return { kind: 'dead_letter', message: addressed };
  if (result.kind === 'move') return { kind: 'move', message: addressed, delaySeconds: result.delaySeconds };
  return { kind: 'come_back', message: addressed, delaySeconds: result.delaySeconds };
}

/**
 * What one dispatch adds to the metrics (docs/operations.md): the evidence entry it recorded by
 * outcome, an HTTP attempt's duration by lane, the time from publishing to the end of a first
 * attempt, and an auto-disable. Nothing when it recorded nothing (a duplicate, a move before any attempt).
 */
export function countDispatch(metrics: MetricsRecorder, result: DispatchResult, lane: LaneRole, now: Date): void {
  const { recorded, delivery } = result;
  if (!recorded) return;
  metrics.add('attempts', 1, { outcome: recorded.outcome });
  if (recorded.http && recorded.durationMs !== null) metrics.add('attemptDuration', recorded.durationMs, { lane });
  if (recorded.http && delivery?.attempts === 1)
    metrics.add('publishToFirstAttempt', Math.max(0, now.getTime() - Date.parse(delivery.createdAt)), {});
  if (result.disabled) metrics.add('autoDisables', 1, {});
}

/** Carries out settlements on a lane's queues (see {@link laneSettler}). */
interface LaneSettler {
  /**
   * Has the delivery come back in `delaySeconds`, in this lane, with no attempt spent: on this
   * message (its visibility; the throw reports the record failed), except on the queue's last
   * receive, where SQS would move the message to the dead-letter queue instead of handing it out
   * again: then as a new message, whose receive count starts again, and this one is acked. If
   * that send fails, on this message after all: the dead-letter consumer sends back a delivery
   * that still has retries (docs/behaviour.md#dead-lettering).
   */
  comeBack(record: SQSRecord, message: DeliveryMessage, delaySeconds: number, why: string): Promise<void>;
  /** Does what `settlement` asks of the queue; a throw reports the record failed (it comes back after the delay set). */
  settle(record: SQSRecord, settlement: Settlement, metrics: MetricsRecorder): Promise<void>;
}

/** The settler of a lane's messages. */
export function laneSettler(queues: LaneQueues, log: Pick<ConsumerLog, 'warn'>): LaneSettler {
  async function comeBack(record: SQSRecord, message: DeliveryMessage, delaySeconds: number, why: string): Promise<void> {
    if (receiveCountOf(record) >= MAX_RECEIVES) {
      try {
        await queues.ownLane.send([{ ...message, delaySeconds }]);
        return;
      } catch (error) {
        log.warn('Could not re-send a delivery on its last receive; its message comes back, or goes to the dead-letter queue', {
          deliveryId: message.deliveryId,
          error,
        });
      }
    }
    await queues.delayer.delay(record.receiptHandle, delaySeconds);
    throw new RetryLater(`${message.deliveryId}: ${why}`);
  }

  async function settle(record: SQSRecord, settlement: Settlement, metrics: MetricsRecorder): Promise<void> {
    if (settlement.kind === 'ack') return;
    const { message } = settlement;
    if (settlement.kind === 'come_back') return comeBack(record, message, settlement.delaySeconds, `retry in ${settlement.delaySeconds} s`);
    try {
      if (settlement.kind === 'move') {
        await queues.slowLane.send([{ ...message, delaySeconds: settlement.delaySeconds }]);
        metrics.add('laneMoves', 1, {});
      } else await queues.deadLetters.send([message]);
      return;
    } catch (error) {
      // Not moved: it comes back in this lane when due, and the next receive tries again.
      log.warn(
        `Could not ${settlement.kind === 'move' ? 'move a delivery to the slow lane' : 'send a spent delivery to the dead-letter queue'}`,
        { deliveryId: message.deliveryId, error },
      );
      if (settlement.kind === 'move') return comeBack(record, message, settlement.delaySeconds, 'move failed');
      // Spent: past the last receive, SQS's own redrive takes it where it was going.
      await queues.delayer.delay(record.receiptHandle, 0);
      throw new RetryLater(`${message.deliveryId}: dead_letter failed`);
    }
  }

  return { comeBack, settle };
}

/** A batch's plan: parsed messages, and (slow lane) those deferred, with whether their send worked. */
interface BatchPlan {
  readonly messages: Map<string, DeliveryMessage | null>;
  readonly deferred: Map<string, boolean>;
}

/**
 * How long before its second ends a send granted in it must have started: a send not started by
 * then comes back (docs/behaviour.md#delivery-rate-per-endpoint), so a receiver near the
 * dispatcher never sees a second's sends spill into the next.
 */
const RATE_SEND_MARGIN_MS = 100;

/**
 * The batches of the dispatcher of `lane` (docs/architecture.md#dispatcher): each batch reads each
 * endpoint once, is planned, then has each record dispatched and settled.
 */
export function dispatcherBatch(lane: LaneRole, adapters: DispatcherBatchAdapters): BatchConsumer {
  const { queues, log } = adapters;
  const settler = laneSettler(queues, log);

  /**
   * Parses the batch and, in the slow lane, defers what is over the caps: re-sent in one batch,
   * due in {@link SLOW_LANE.deferSeconds}, as new messages (a deferral is no receive and no attempt).
   */
  async function planBatch(records: readonly SQSRecord[], metrics: MetricsRecorder): Promise<BatchPlan> {
    const messages = new Map(records.map((r) => [r.messageId, parseDeliveryMessage(r.body)] as const));
    const deferred = new Map<string, boolean>();
    if (lane !== 'slow') return { messages, deferred };
    const addressed = records.flatMap((r) => {
      const m = messages.get(r.messageId);
      return m ? [{ ...m, messageId: r.messageId }] : [];
    });
    const { defer } = selectForAttempt(addressed);
    if (defer.length === 0) return { messages, deferred };
    metrics.add('laneDeferrals', defer.length, {});
    let sent = true;
    try {
      await queues.slowLane.send(defer.map(({ messageId: _, ...m }) => ({ ...m, delaySeconds: SLOW_LANE.deferSeconds })));
    } catch (error) {
      sent = false;
      log.warn('Deferred deliveries could not be re-sent; they come back with their messages', {
        count: defer.length,
        error,
      });
    }
    for (const m of defer) deferred.set(m.messageId, sent);
    return { messages, deferred };
  }

  /**
   * Claims the rate budget of each rate-limited endpoint of the batch (docs/behaviour.md#delivery-rate-per-endpoint):
   * one conditional write per endpoint, for as many of its records as the batch holds; the first
   * ones granted are sent, the rest come back. Records of an endpoint without a rate have no share.
   */
  async function claimRates(records: readonly SQSRecord[], plan: BatchPlan, endpoint: EndpointReader): Promise<Map<string, RateShare>> {
    const groups = new Map<string, { workspace: string; endpointId: string; ids: string[] }>();
    for (const r of records) {
      const message = plan.messages.get(r.messageId);
      // A message that does not name its endpoint claims for itself once its endpoint is read (rateGate).
      if (!message?.workspace || !message.endpointId || plan.deferred.has(r.messageId)) continue;
      const key = `${message.workspace}\u0000${message.endpointId}`;
      const group = groups.get(key) ?? { workspace: message.workspace, endpointId: message.endpointId, ids: [] };
      group.ids.push(r.messageId);
      groups.set(key, group);
    }
    const shares = new Map<string, RateShare>();
    // The batch's reads of its endpoints, which its dispatches reuse: no read of its own.
    const limited = (
      await Promise.all(
        [...groups.values()].map(async ({ workspace, endpointId, ids }) => {
          const limit = (await endpoint(workspace, endpointId).catch(() => null))?.options?.rateLimitPerSecond;
          return limit === undefined ? [] : [{ ids, endpointId, limit }];
        }),
      )
    ).flat();
    if (limited.length === 0) return shares;
    const { second, sendAfter, sendBy } = rateSecond();
    await Promise.all(
      limited.map(async ({ ids, endpointId, limit }) => {
        const granted = await claimed(endpointId, limit, ids.length, second);
        ids.forEach((id, i) => shares.set(id, { granted: i < granted, sendAfter, sendBy }));
      }),
    );
    return shares;
  }

  /**
   * The second to claim in: the next one, so the batch's reads (and a token request) run while it
   * comes, and its sends all start within it, from its start to {@link RATE_SEND_MARGIN_MS} before its end.
   */
  function rateSecond(): { second: number; sendAfter: number; sendBy: number } {
    const second = Math.floor(adapters.dispatch().now().getTime() / 1000) + 1;
    return { second, sendAfter: second * 1000, sendBy: (second + 1) * 1000 - RATE_SEND_MARGIN_MS };
  }

  /** Sends granted of `wanted`; none when the claim fails (they come back, and the next receive claims again). */
  async function claimed(endpointId: string, limit: number, wanted: number, second: number): Promise<number> {
    try {
      return await claimSendBudget(adapters.table(), endpointId, limit, wanted, second);
    } catch (error) {
      log.warn('Could not claim an endpoint rate budget; its deliveries come back', { endpointId, error });
      return 0;
    }
  }

  /**
   * A record's rate gate: its share claimed with the batch's, or, for a message that does not name
   * its endpoint (a replay's or a test send's first), a claim of one when its endpoint turns out rate-limited.
   */
  function rateGate(share: RateShare | undefined): NonNullable<DispatchDeps['rate']> {
    return async (ep) => {
      if (share) return share;
      const limit = ep.options?.rateLimitPerSecond;
      if (limit === undefined) return null;
      const { second, sendAfter, sendBy } = rateSecond();
      return { granted: (await claimed(ep.endpointId, limit, 1, second)) === 1, sendAfter, sendBy };
    };
  }

  /** Dispatches one record's delivery and settles its message; a throw reports the record failed. */
  async function dispatchRecord(
    record: SQSRecord,
    plan: BatchPlan,
    endpoint: EndpointReader,
    rates: Map<string, RateShare>,
    run: BatchRun,
  ): Promise<void> {
    const message = plan.messages.get(record.messageId);
    if (!message) {
      // A body that is no delivery can never succeed: ack it, loudly.
      log.error('Dropped a message that is not a delivery', { messageId: record.messageId });
      return;
    }
    const deferred = plan.deferred.get(record.messageId);
    if (deferred !== undefined) {
      if (deferred) return;
      return settler.comeBack(record, message, SLOW_LANE.deferSeconds, 'deferred, not re-sent');
    }
    const share = rates.get(record.messageId);
    // Over its endpoint's rate: back in a second, no attempt spent, no evidence.
    if (share && !share.granted) return settler.comeBack(record, message, OVER_RATE_DELAY_SECONDS, 'over its endpoint rate');
    const deps: DispatchDeps = { ...adapters.dispatch(), endpoint, rate: rateGate(share) };
    const result = await dispatchDelivery(deps, message.deliveryId, lane);
    run.health.add(result.recorded);
    countDispatch(run.metrics, result, lane, deps.now());
    await settler.settle(record, settlementOf(message, result), run.metrics);
  }

  return async (records, run) => {
    const endpoint = endpointReaderForBatch(adapters.table());
    const plan = await planBatch(records, run.metrics);
    const rates = await claimRates(records, plan, endpoint);
    return (record) => dispatchRecord(record, plan, endpoint, rates, run);
  };
}
