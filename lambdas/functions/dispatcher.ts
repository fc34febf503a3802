/**
 * Lambda entry of the dispatcher (SQS event source, ReportBatchItemFailures) of the delivery queue:
 * the fast lane where the stage has a slow lane (`SLOW_DELIVERY_QUEUE_URL`), else the only one
 * (docs/behaviour.md#delivery-lanes); `slow-dispatcher.ts` is the slow lane's. The records of a batch are dispatched
 * concurrently (Powertools batch); a retryable failure delays its message by the backoff and is
 * reported failed; a move sends the message to the slow lane and a spent one to the dead-letter
 * queue, then both are acked. In the slow lane, a batch first defers what is over the
 * per-endpoint and per-workspace caps. After the batch, what it recorded is added to the health
 * counters in one write per key (docs/architecture.md#health-counters), and its metrics are written
 * in one flush (docs/operations.md).
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { BufferedMetrics } from '../composition/metrics';
import { defaultRuntime, delayerFromEnv, invocationMetrics, logger, queueFromEnv, secretSealerFromEnv } from '../composition/runtime';
import type { MetricsRecorder } from '../contract/metrics';
import { selectForAttempt, SLOW_LANE, type LaneRole } from '../domain/delivery-lanes';
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
  const delayer = delayerFromEnv(process.env, lane === 'slow' ? 'SLOW_DELIVERY_QUEUE_URL' : 'DELIVERY_QUEUE_URL');
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
      logger.warn('Deferred deliveries could not be re-sent; they come back with their messages', { count: defer.length, error: error as Error });
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
      await delayer.delay(record.receiptHandle, SLOW_LANE.deferSeconds);
      throw new RetryLater(`${message.deliveryId}: deferred, not re-sent`);
    }
    const { deps } = defaultRuntime();
    const receiveCount = Number(record.attributes?.ApproximateReceiveCount ?? '1');
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

  /** Does what the result asks of the queue; a throw reports the record failed (it comes back after the delay set). */
  async function settle(record: SQSRecord, message: DeliveryMessage, result: DispatchResult, metrics: MetricsRecorder): Promise<void> {
    if (result.kind === 'ack') return;
    const { delivery } = result;
    const addressed = { deliveryId: message.deliveryId, endpointId: delivery.endpointId, workspace: delivery.workspace };
    if (result.kind === 'move' || result.kind === 'dead_letter') {
      try {
        if (result.kind === 'move') {
          await slowLane.send([{ ...addressed, delaySeconds: result.delaySeconds }]);
          metrics.add('laneMoves', 1, {});
        } else await deadLetters.send([addressed]);
        return;
      } catch (error) {
        // Not moved: the message itself comes back when due, and the next receive tries again.
        logger.warn(`Could not ${result.kind === 'move' ? 'move a delivery to the slow lane' : 'send a spent delivery to the dead-letter queue'}`, { deliveryId: message.deliveryId, error: error as Error });
        await delayer.delay(record.receiptHandle, result.kind === 'move' ? result.delaySeconds : 0);
        throw new RetryLater(`${message.deliveryId}: ${result.kind} failed`);
      }
    }
    await delayer.delay(record.receiptHandle, result.delaySeconds);
    throw new RetryLater(`${message.deliveryId}: retry in ${result.delaySeconds} s`);
  }

  return async function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
    // One processor, health tally and metrics buffer per invocation: they hold the batch's state.
    const invocation: Invocation = { health: new BatchHealth(), metrics: invocationMetrics(), endpoint: endpointReaderForBatch(defaultRuntime().deps.table) };
    try {
      const plan = await planBatch(event.Records, invocation.metrics);
      const response = await processPartialResponse(event, (record: SQSRecord) => handleRecord(record, plan, invocation), new BatchProcessor(EventType.SQS), {
        context,
        processInParallel: true,
        throwOnFullBatchFailure: false,
      });
      await flushHealth(invocation.health);
      return response;
    } finally {
      invocation.metrics.flush();
    }
  };
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
  if (recorded.http && delivery?.attempts === 1) metrics.add('publishToFirstAttempt', Math.max(0, now.getTime() - Date.parse(delivery.createdAt)), {});
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
