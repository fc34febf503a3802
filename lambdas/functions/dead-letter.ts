/**
 * Lambda entry of the dead-letter consumer (the DLQ's event source). A delivery that still has
 * retries (its message was given up by the queue, not spent) is sent back to the delivery queue
 * (`DELIVERY_QUEUE_URL`) as a new message with its requeue count raised, a bounded number of times
 * (docs/behaviour.md#dead-lettering). After the batch, the deliveries it marked are added to the
 * health counters (docs/architecture.md#health-counters) and counted as `dead_lettered` attempts in
 * one metrics flush (docs/operations.md).
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { defaultRuntime, invocationMetrics, logger, queueFromEnv } from '../composition/runtime';
import type { MetricsRecorder } from '../contract/metrics';
import { BatchHealth } from '../pipeline/batch-health';
import { deadLetterDelivery } from '../pipeline/dead-letter';
import { parseDeliveryMessage } from '../queue/delivery-queue';

/** Where a delivery that still has retries goes back to: the fast lane, which moves it on if its endpoint is slow. */
const deliveries = queueFromEnv(process.env, 'DELIVERY_QUEUE_URL');

async function handleRecord(record: SQSRecord, health: BatchHealth, metrics: MetricsRecorder): Promise<void> {
  const message = parseDeliveryMessage(record.body);
  if (!message) {
    logger.error('Dropped a dead letter that is not a delivery', { messageId: record.messageId });
    return;
  }
  const { deps } = defaultRuntime();
  const requeues = message.requeues ?? 0;
  const result = await deadLetterDelivery({ table: deps.table, now: deps.now }, message.deliveryId, requeues);
  if (result.kind === 'requeue') {
    const { delivery } = result;
    // A new message: its receive count starts again. A failed send fails the record, and the dead letter comes back.
    await deliveries.send([
      {
        deliveryId: delivery.deliveryId,
        endpointId: delivery.endpointId,
        workspace: delivery.workspace,
        requeues: requeues + 1,
        delaySeconds: result.delaySeconds,
      },
    ]);
    logger.warn('Dead letter with retries left sent back to the delivery queue', {
      deliveryId: message.deliveryId,
      requeues: requeues + 1,
      attempts: delivery.attempts,
      status: delivery.status,
    });
    return;
  }
  if (result.kind === 'dead_lettered') {
    health.add(result.recorded);
    metrics.add('attempts', 1, { outcome: result.recorded.outcome });
  }
  logger.info('Dead letter handled', { deliveryId: message.deliveryId, result: result.kind });
}

/** The SQS handler. */
export async function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  // One processor, health tally and metrics buffer per invocation: they hold the batch's state.
  const health = new BatchHealth();
  const metrics = invocationMetrics();
  try {
    const response = await processPartialResponse(
      event,
      (record: SQSRecord) => handleRecord(record, health, metrics),
      new BatchProcessor(EventType.SQS),
      {
        context,
        processInParallel: true,
        throwOnFullBatchFailure: false,
      },
    );
    const observations = health.size;
    try {
      await health.flush(defaultRuntime().deps.table);
    } catch (error) {
      // Best effort: a failed write loses this batch's counts, never a marking (docs/behaviour.md#endpoint-health).
      logger.error('Health counts of a batch were not written', { observations, error: error as Error });
    }
    return response;
  } finally {
    metrics.flush();
  }
}
