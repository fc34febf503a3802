/**
 * Lambda entry of the job worker (the jobs queue's event source,
 * ReportBatchItemFailures, one message per invocation): each message runs one
 * paced slice of its job (a recovery, an endpoint's purge or a workspace's
 * erasure: docs/architecture.md#recovery-jobs) within the invocation's
 * remaining time. A slice that throws or runs out of time is received again;
 * on its last receive the job is marked failed (a recovery's endpoint lock
 * released; an erasure's workspace kept reserved), and the message goes to
 * the jobs DLQ.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger, recoveryWorkerFromEnv } from '../composition/runtime';
import { runJobMessage } from '../pipeline/recovery-worker';
import { JOB_WORKER_CONSUMER } from '../contract/deployment';
import { parseJobMessage } from '../queue/job-queue';

/** The SQS handler. */
export async function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  const deps = recoveryWorkerFromEnv();
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    const message = parseJobMessage(record.body);
    if (!message) {
      logger.error('Dropped a message that is not a job', { messageId: record.messageId });
      continue;
    }
    const receives = Number(record.attributes?.ApproximateReceiveCount ?? '1');
    try {
      const result = await runJobMessage(deps, message.jobId, {
        count: receives,
        maxReceives: JOB_WORKER_CONSUMER.maxReceives,
        remainingMs: context.getRemainingTimeInMillis(),
      });
      if (result.kind === 'done') {
        logger.info('Recovery slice', { jobId: message.jobId, ...result.outcome });
        continue;
      }
      logger.error('Recovery slice failed', { jobId: message.jobId, receives, jobFailed: result.jobFailed, error: result.error as Error });
    } catch (error) {
      // Marking the job failed itself failed (on the last receive): the message still goes to the DLQ.
      logger.error('Could not mark the job failed', { jobId: message.jobId, receives, error: error as Error });
    }
    batchItemFailures.push({ itemIdentifier: record.messageId });
  }
  return { batchItemFailures };
}
