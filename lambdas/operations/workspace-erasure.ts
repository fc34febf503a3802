/**
 * Erasing a workspace (docs/behaviour.md#erasing-a-workspace): the platform API's DELETE of a
 * workspace starts a paced job that erases everything the workspace holds, and the job can be
 * read by its id. The erasing itself is the job worker's (lambdas/pipeline/recovery-worker.ts).
 */
import { AppError } from '../contract/errors';
import type { ErasureJob } from '../contract/erasure-schemas';
import { newId } from '../domain/ids';
import { endWorkspaceAccess, getErasureRecord, startErasure, toErasureWire } from '../store/workspace-erasure';
import type { OperationDeps } from './context';

/**
 * How long a running erasure may go without a slice before a repeated DELETE sends its message
 * again (a lost message): far beyond the pacing between slices. A second chain beside a live one
 * would be harmless anyway: the slices claim the job's version, so one of the two ends, and each
 * item is counted by the transaction that deletes it, whichever chain that is.
 */
const STALLED_AFTER_MS = 15 * 60 * 1000;

/**
 * Starts erasing workspace `slug` on behalf of `requestedBy` (the IAM principal ARN of the platform
 * call): the job and the workspace's `erasingJobId` in one transaction, then every token and
 * session of the workspace stops resolving before this answers, then the job is queued. When the
 * workspace is already being erased, the same job (a repeated DELETE is harmless); when that job
 * failed, it is resumed. 404 `WorkspaceNotFound` when there is no such workspace.
 */
export async function startWorkspaceErasure(deps: OperationDeps, slug: string, requestedBy: string): Promise<ErasureJob> {
  const jobQueue = deps.jobQueue;
  if (!jobQueue) throw new Error('This function has no jobs queue (JOB_QUEUE_URL)');
  const now = deps.now();
  const start = await startErasure(deps.table, { slug, jobId: newId('whj', now), requestedBy }, now);
  if (start.kind === 'no_workspace') throw new AppError('WorkspaceNotFound', `No workspace ${slug}`);
  // Again on a repeated DELETE: a start whose first attempt failed here still ends access.
  await endWorkspaceAccess(deps.table, slug);
  // A running job that never ran a slice (its first message may not have been sent) or has stalled is sent again.
  const { job } = start;
  const stalled = job.version === 0 || now.getTime() - Date.parse(job.nextSliceAt) > STALLED_AFTER_MS;
  if (start.kind !== 'running' || stalled) await jobQueue.send({ jobId: job.jobId });
  return toErasureWire(job);
}

/** An erasure job by id; null when there is none (a recovery job's id included). */
export async function getErasureJob(deps: OperationDeps, jobId: string): Promise<ErasureJob | null> {
  const job = await getErasureRecord(deps.table, jobId);
  return job && toErasureWire(job);
}
