/**
 * Lambda entry of the dispatcher (SQS event source, ReportBatchItemFailures) of the delivery queue:
 * the fast lane where the stage has a slow lane (`SLOW_DELIVERY_QUEUE_URL`), else the only one
 * (docs/behaviour.md#delivery-lanes); `slow-dispatcher.ts` is the slow lane's. The records of a batch are dispatched
 * concurrently (Powertools batch); a retryable failure delays its message by the backoff and is
 * reported failed; a move sends the message to the slow lane and a spent one to the dead-letter
 * queue, then both are acked. In the slow lane, a batch first defers what is over the
 * per-endpoint and per-workspace caps. Only attempts spend a delivery's retries: a message that
 * is to come back on its queue's last receive (SQS would move it to the dead-letter queue) is
 * re-sent as a new message to its own lane instead (docs/architecture.md#retries-and-visibility). After the batch, what it recorded is added to the health
 * counters in one write per key (docs/architecture.md#health-counters), and its metrics are written
 * in one flush (docs/operations.md).
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { BufferedMetrics } from '../composition/metrics';
import { defaultRuntime, delayerFromEnv, invocationMetrics, logger, queueFromEnv, secretSealerFromEnv } from '../composition/runtime';
import type { MetricsRecorder } from '../contract/metrics';
import { selectForAttempt, SLOW_LANE, type LaneRole } from '../domain/delivery-lanes';
import { MAX_RECEIVES } from '../domain/delivery-lifecycle';
import { BatchHealth } from '../pipeline/batch-health';
import { dispatchDelivery, endpointReaderForBatch, systemResolver, type DispatchResult } from '../pipeline/dispatcher';
import { httpSender } from '../pipeline/http-sender';
import { parseDeliveryMessage, type DeliveryMessage } from '../queue/delivery-queue';

/** One invocation's state: its health tally and its metrics. */
interface Invocation {
  readonly health: BatchHealth;
  /** Reads each endpoint once per batch. */
  readonly endpoint: ReturnType<typeof endpointReaderForBatch>;
  readonly metrics: BufferedMetrics;
}

/** A batch's plan: parsed messages, and (slow lane) those deferred, with whether their send worked. */
interface BatchPlan {
  readonly messages: Map<string, DeliveryMessage | null>;
  readonly deferred: Map<string, boolean>;
}

/** Raised for a record the queue should deliver again later. */
class RetryLater extends Error {
  override readonly name = 'RetryLater';
}

/**
 * The SQS handler of a dispatcher in `lane`. Its queue (for the backoff's visibility changes) is
 * the slow lane's for `slow`, else `DELIVERY_QUEUE_URL`.
 */
export function dispatcherHandler(lane: LaneRole): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const ownQueue = lane === 'slow' ? 'SLOW_DELIVERY_QUEUE_URL' : 'DELIVERY_QUEUE_URL';
  const delayer = delayerFromEnv(process.env, ownQueue);
  const ownLane = queueFromEnv(process.env, ownQueue);
  const slowLane = queueFromEnv(process.env, 'SLOW_DELIVERY_QUEUE_URL');
  const deadLetters = queueFromEnv(process.env, 'DEAD_LETTER_QUEUE_URL');

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
      await slowLane.send(defer.map(({ messageId: _, ...m }) => ({ ...m, delaySeconds: SLOW_LANE.deferSeconds })));
    } catch (error) {
      sent = false;
      logger.warn('Deferred deliveries could not be re-sent; they come back with their messages', {
        count: defer.length,
        error: error as Error,
      });
    }
    for (const m of defer) deferred.set(m.messageId, sent);
    return { messages, deferred };
  }

  async function handleRecord(record: SQSRecord, plan: BatchPlan, invocation: Invocation): Promise<void> {
    const message = plan.messages.get(record.messageId);
    if (!message) {
      // A body that is no delivery can never succeed: ack it, loudly.
      logger.error('Dropped a message that is not a delivery', { messageId: record.messageId });
      return;
    }
    const deferred = plan.deferred.get(record.messageId);
    if (deferred !== undefined) {
      if (deferred) return;
      return comeBack(record, message, SLOW_LANE.deferSeconds, 'deferred, not re-sent');
    }
    const { deps } = defaultRuntime();
    const receiveCount = receiveCountOf(record);
    const result = await dispatchDelivery(
      {
        table: deps.table,
        now: deps.now,
        urlPolicy: deps.urlPolicy,
        sender: httpSender,
        resolve: systemResolver,
        events: deps.events,
        log: logger,
        secrets: secretSealerFromEnv(),
        endpoint: invocation.endpoint,
      },
      message.deliveryId,
      receiveCount,
      lane,
    );
    invocation.health.add(result.recorded);
    countDispatch(invocation.metrics, result, lane, deps.now());
    await settle(record, message, result, invocation.metrics);
  }

  /**
   * Has the delivery come back in `delaySeconds`, in this lane, with no attempt spent: on this
   * message (its visibility; the throw reports the record failed), except on the queue's last
   * receive, where SQS would move the message to the dead-letter queue instead of handing it out
   * again: then as a new message, whose receive count starts again, and this one is acked. If
   * that send fails, on this message after all: the dead-letter consumer sends back a delivery
   * that still has retries (docs/behaviour.md#dead-lettering).
   */
  async function comeBack(record: SQSRecord, message: DeliveryMessage, delaySeconds: number, why: string): Promise<void> {
    if (receiveCountOf(record) >= MAX_RECEIVES) {
      try {
        await ownLane.send([{ ...message, delaySeconds }]);
        return;
      } catch (error) {
        logger.warn('Could not re-send a delivery on its last receive; its message comes back, or goes to the dead-letter queue', {
          deliveryId: message.deliveryId,
          error: error as Error,
        });
      }
    }
    await delayer.delay(record.receiptHandle, delaySeconds);
    throw new RetryLater(`${message.deliveryId}: ${why}`);
  }

  /** Does what the result asks of the queue; a throw reports the record failed (it comes back after the delay set). */
  async function settle(record: SQSRecord, message: DeliveryMessage, result: DispatchResult, metrics: MetricsRecorder): Promise<void> {
    if (result.kind === 'ack') return;
    const { delivery } = result;
    // The requeue count rides along on every re-send of the delivery (docs/architecture.md#queue-messages).
    const addressed: DeliveryMessage = {
      deliveryId: message.deliveryId,
      endpointId: delivery.endpointId,
      workspace: delivery.workspace,
      ...(message.requeues ? { requeues: message.requeues } : {}),
    };
    if (result.kind === 'move' || result.kind === 'dead_letter') {
      try {
        if (result.kind === 'move') {
          await slowLane.send([{ ...addressed, delaySeconds: result.delaySeconds }]);
          metrics.add('laneMoves', 1, {});
        } else await deadLetters.send([addressed]);
        return;
      } catch (error) {
        // Not moved: it comes back in this lane when due, and the next receive tries again.
        logger.warn(
          `Could not ${result.kind === 'move' ? 'move a delivery to the slow lane' : 'send a spent delivery to the dead-letter queue'}`,
          { deliveryId: message.deliveryId, error: error as Error },
        );
        if (result.kind === 'move') return comeBack(record, addressed, result.delaySeconds, 'move failed');
        // Spent: past the last receive, SQS's own redrive takes it where it was going.
        await delayer.delay(record.receiptHandle, 0);
        throw new RetryLater(`${message.deliveryId}: dead_letter failed`);
      }
    }
    return comeBack(record, addressed, result.delaySeconds, `retry in ${result.delaySeconds} s`);
  }

  return async function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
    // One processor, health tally and metrics buffer per invocation: they hold the batch's state.
    const invocation: Invocation = {
      health: new BatchHealth(),
      metrics: invocationMetrics(),
      endpoint: endpointReaderForBatch(defaultRuntime().deps.table),
    };
    try {
      const plan = await planBatch(event.Records, invocation.metrics);
      const response = await processPartialResponse(
        event,
        (record: SQSRecord) => handleRecord(record, plan, invocation),
        new BatchProcessor(EventType.SQS),
        {
          context,
          processInParallel: true,
          throwOnFullBatchFailure: false,
        },
      );
      await flushHealth(invocation.health);
      return response;
    } finally {
      invocation.metrics.flush();
    }
  };
}

/** How many times the queue has handed this message out, this receive included. */
function receiveCountOf(record: SQSRecord): number {
  return Number(record.attributes?.ApproximateReceiveCount ?? '1');
}

/** The delivery queue's dispatcher: the fast lane where the stage has a slow lane, else the only lane. */
export const handler = dispatcherHandler(process.env.SLOW_DELIVERY_QUEUE_URL ? 'fast' : 'only');

/**
 * What one dispatch adds to the metrics (docs/operations.md): the evidence entry it recorded by
 * outcome, an HTTP attempt's duration by lane, the time from publishing to the end of a first
 * attempt, and an auto-disable. Nothing when it recorded nothing (a duplicate, a move before any attempt).
 */
function countDispatch(metrics: MetricsRecorder, result: DispatchResult, lane: LaneRole, now: Date): void {
  const { recorded, delivery } = result;
  if (!recorded) return;
  metrics.add('attempts', 1, { outcome: recorded.outcome });
  if (recorded.http && recorded.durationMs !== null) metrics.add('attemptDuration', recorded.durationMs, { lane });
  if (recorded.http && delivery?.attempts === 1)
    metrics.add('publishToFirstAttempt', Math.max(0, now.getTime() - Date.parse(delivery.createdAt)), {});
  if (result.disabled) metrics.add('autoDisables', 1, {});
}

/** Counts are best effort: a failed write loses this batch's counts, never a delivery (docs/behaviour.md#endpoint-health). */
async function flushHealth(health: BatchHealth): Promise<void> {
  const observations = health.size;
  try {
    await health.flush(defaultRuntime().deps.table);
  } catch (error) {
    logger.error('Health counts of a batch were not written', { observations, error: error as Error });
  }
}
