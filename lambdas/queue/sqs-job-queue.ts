/** The SQS adapter of the jobs queue. */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { MAX_JOB_DELAY_SECONDS, type JobQueue } from './job-queue';

/** A jobs queue on SQS: one SendMessage per job message, its delay as DelaySeconds. */
export function sqsJobQueue(sqs: SQSClient, queueUrl: string): JobQueue {
  return {
    async send(message, delaySeconds = 0) {
      const delay = Math.min(Math.max(0, Math.ceil(delaySeconds)), MAX_JOB_DELAY_SECONDS);
      // Loaded on first use, not at cold start (docs/architecture.md#lambda-bundles).
      const { SendMessageCommand } = await import('@aws-sdk/client-sqs');
      await sqs.send(
        new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify({ jobId: message.jobId }), DelaySeconds: delay }),
      );
    },
  };
}
