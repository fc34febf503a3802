/** The SQS adapter of the delivery queue. */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { SQS_BATCH_ENTRIES } from '../contract/aws-limits';
import { deliveryMessageBody, messageDelay, type DeliveryMessage, type DeliveryQueue, type MessageDelayer } from './delivery-queue';

/** A delivery queue on SQS (SendMessageBatch, SQS_BATCH_ENTRIES per call, each with its delay; failed entries retried then reported). */
export function sqsDeliveryQueue(sqs: SQSClient, queueUrl: string): DeliveryQueue {
  return {
    async send(messages: readonly DeliveryMessage[]) {
      // Loaded on first use, not at cold start (docs/architecture.md#lambda-bundles).
      const { SendMessageBatchCommand } = await import('@aws-sdk/client-sqs');
      for (let i = 0; i < messages.length; i += SQS_BATCH_ENTRIES) {
        let entries = messages.slice(i, i + SQS_BATCH_ENTRIES).map((m, j) => ({
          Id: String(j),
          MessageBody: deliveryMessageBody(m),
          ...(messageDelay(m) > 0 ? { DelaySeconds: messageDelay(m) } : {}),
        }));
        for (let tries = 0; entries.length > 0 && tries < 3; tries++) {
          const out = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
          const failed = new Set((out.Failed ?? []).map((f) => f.Id));
          entries = entries.filter((e) => failed.has(e.Id));
        }
        // What is still unsent stays `pending` and the stuck-pending repair re-queues it.
        if (entries.length > 0) throw new Error(`SQS refused ${entries.length} delivery messages`);
      }
    },
  };
}

/** Delays the next receive of a message (the retry backoff) with ChangeMessageVisibility. */
export function sqsMessageDelayer(sqs: SQSClient, queueUrl: string): MessageDelayer {
  return {
    async delay(receiptHandle, seconds) {
      const { ChangeMessageVisibilityCommand } = await import('@aws-sdk/client-sqs');
      await sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: queueUrl,
          ReceiptHandle: receiptHandle,
          VisibilityTimeout: Math.min(Math.max(0, Math.round(seconds)), 43_200),
        }),
      );
    },
  };
}
