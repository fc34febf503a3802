/**
 * Lambda entry of the dead-letter consumer (the DLQ's event source). After the batch, the
 * deliveries it marked are added to the health counters (docs/architecture.md#health-counters)
 * and counted as `dead_lettered` attempts in one metrics flush (docs/operations.md).
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { defaultRuntime, invocationMetrics, logger } from '../composition/runtime';
import type { MetricsRecorder } from '../contract/metrics';
import { BatchHealth } from '../pipeline/batch-health';
import { deadLetterDelivery } from '../pipeline/dead-letter';
import { parseDeliveryMessage } from '../queue/delivery-queue';

async function handleRecord(record: SQSRecord, health: BatchHealth, metrics: MetricsRecorder): Promise<void> {
  const message = parseDeliveryMessage(record.body);
  if (!message) {
    logger.error('Dropped a dead letter that is not a delivery', { messageId: record.messageId });
    return;
  }
  const { deps } = defaultRuntime();
  const result = await deadLetterDelivery({ table: deps.table, now: deps.now }, message.deliveryId);
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
    const response = await processPartialResponse(event, (record: SQSRecord) => handleRecord(record, health, metrics), new BatchProcessor(EventType.SQS), {
      context,
      processInParallel: true,
      throwOnFullBatchFailure: false,
    });
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
