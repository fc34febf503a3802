/** Lambda entry of the dead-letter consumer (the DLQ's event source). */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { defaultRuntime, logger } from '../composition/runtime';
import { deadLetterDelivery } from '../pipeline/dead-letter';
import { parseDeliveryMessage } from '../queue/delivery-queue';


async function handleRecord(record: SQSRecord): Promise<void> {
  const message = parseDeliveryMessage(record.body);
  if (!message) {
    logger.error('Dropped a dead letter that is not a delivery', { messageId: record.messageId });
    return;
  }
  const { deps } = defaultRuntime();
  const result = await deadLetterDelivery({ table: deps.table, now: deps.now }, message.deliveryId);
  logger.info('Dead letter handled', { deliveryId: message.deliveryId, result: result.kind });
}

/** The SQS handler. */
export async function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  // One processor per invocation: it holds the batch's state.
  return processPartialResponse(event, handleRecord, new BatchProcessor(EventType.SQS), { context, processInParallel: true, throwOnFullBatchFailure: false });
}
