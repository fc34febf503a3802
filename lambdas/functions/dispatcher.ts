/**
 * Lambda entry of the dispatcher (SQS event source, ReportBatchItemFailures):
 * the records of a batch are dispatched concurrently (Powertools batch); a
 * retryable failure delays its message by the backoff and is reported failed.
 * After the batch, what it recorded is added to the health counters in one
 * write per key (docs/architecture.md#health-counters).
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { defaultRuntime, delayerFromEnv, logger, secretSealerFromEnv } from '../composition/runtime';
import { BatchHealth } from '../pipeline/batch-health';
import { dispatchDelivery, systemResolver } from '../pipeline/dispatcher';
import { httpSender } from '../pipeline/http-sender';
import { parseDeliveryMessage } from '../queue/delivery-queue';

const delayer = delayerFromEnv();

/** Raised for a record the queue should deliver again later. */
class RetryLater extends Error {
  override readonly name = 'RetryLater';
}

async function handleRecord(record: SQSRecord, health: BatchHealth): Promise<void> {
  const message = parseDeliveryMessage(record.body);
  if (!message) {
    // A body that is no delivery can never succeed: ack it, loudly.
    logger.error('Dropped a message that is not a delivery', { messageId: record.messageId });
    return;
  }
  const { deps } = defaultRuntime();
  const receiveCount = Number(record.attributes?.ApproximateReceiveCount ?? '1');
  const result = await dispatchDelivery(
    { table: deps.table, now: deps.now, urlPolicy: deps.urlPolicy, sender: httpSender, resolve: systemResolver, events: deps.events, log: logger, secrets: secretSealerFromEnv() },
    message.deliveryId,
    receiveCount,
  );
  health.add(result.recorded);
  if (result.kind === 'retry') {
    await delayer.delay(record.receiptHandle, result.delaySeconds);
    throw new RetryLater(`${message.deliveryId}: retry in ${result.delaySeconds} s`);
  }
}

/** The SQS handler. */
export async function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  // One processor (and one health tally) per invocation: they hold the batch's state.
  const health = new BatchHealth();
  const response = await processPartialResponse(event, (record: SQSRecord) => handleRecord(record, health), new BatchProcessor(EventType.SQS), {
    context,
    processInParallel: true,
    throwOnFullBatchFailure: false,
  });
  await flushHealth(health);
  return response;
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
