/**
 * Lambda entry of the recovery job worker (the jobs queue's event source,
 * ReportBatchItemFailures, one message per invocation): each message runs one
 * paced slice of its job (docs/architecture.md#recovery-jobs). A slice that
 * throws is received again; on its last receive the job is marked failed, so
 * its endpoint's lock is released, and the message goes to the jobs DLQ.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger, recoveryWorkerFromEnv } from '../composition/runtime';
import { failJob, runRecoverySlice } from '../pipeline/recovery-worker';
import { JOB_WORKER_CONSUMER } from '../contract/deployment';
import { parseJobMessage } from '../queue/job-queue';

/** The SQS handler. */
export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const deps = recoveryWorkerFromEnv();
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    const message = parseJobMessage(record.body);
    if (!message) {
      logger.error('Dropped a message that is not a job', { messageId: record.messageId });
      continue;
    }
    try {
      const outcome = await runRecoverySlice(deps, message.jobId);
      logger.info('Recovery slice', { jobId: message.jobId, ...outcome });
    } catch (error) {
      const receives = Number(record.attributes?.ApproximateReceiveCount ?? '1');
      logger.error('Recovery slice failed', { jobId: message.jobId, receives, error: error as Error });
      if (receives >= JOB_WORKER_CONSUMER.maxReceives) {
        await failJob(deps, message.jobId, 'worker_error').catch((e: unknown) =>
          logger.error('Could not mark the job failed', { jobId: message.jobId, error: e as Error }),
        );
      }
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures };
}
