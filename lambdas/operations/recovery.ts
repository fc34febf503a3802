/**
 * Recovery operations (docs/behaviour.md#recovery-jobs): count or start the
 * recovery of an endpoint's deliveries, read a job, cancel it. The replays
 * themselves are written by the job worker (lambdas/pipeline/recovery-worker.ts).
 */
import { AppError } from '../contract/errors';
import { DEFAULT_RECOVERY_JOBS_PER_WORKSPACE } from '../contract/jobs';
import { newRecoveryJob, recoveryWindow } from '../domain/recovery';
import type { OperationDeps, OperationImpl } from './context';
import { callerActor } from './context';
import { getEndpointRecord } from '../store/endpoints';
import { countMatches, createRecoveryJob, finishJob, getJobRecord, runningRecoveryOf, toJobWire } from '../store/recovery-jobs';
import type { JobRecord } from '../domain/recovery';
import { assertMayChangeEndpoint } from './portal-scope';

async function jobOf(deps: OperationDeps, workspace: string, jobId: string): Promise<JobRecord> {
  const job = await getJobRecord(deps.table, jobId);
  // Another workspace's job is as absent as a missing one.
  if (!job || job.workspace !== workspace) throw new AppError('JobNotFound', `No job ${jobId} in workspace ${workspace}`);
  return job;
}

/**
 * The stage's `recoveryJobsPerWorkspace` (docs/deploy.md#settings), when the composition root gives
 * it to the operations; otherwise the default.
 */
function jobsPerWorkspace(deps: OperationDeps): number {
  const given = deps.recoveryJobsPerWorkspace;
  return given !== undefined && Number.isInteger(given) && given >= 1 ? given : DEFAULT_RECOVERY_JOBS_PER_WORKSPACE;
}

/** POST .../webhooks/{endpointId}/recover: the dry-run count, or a new running job (202). */
export const recoverWebhookDeliveries: OperationImpl<'recoverWebhookDeliveries'> = async (deps, caller, { params, body }) => {
  const endpoint = await getEndpointRecord(deps.table, caller.workspace, params.endpointId);
  if (!endpoint) throw new AppError('EndpointNotFound', `No webhook endpoint ${params.endpointId} in workspace ${caller.workspace}`);
  assertMayChangeEndpoint(caller, endpoint);
  if (!endpoint.enabled)
    throw new AppError(
      'EndpointDisabled',
      `Endpoint ${endpoint.endpointId} is disabled; re-enable it (PATCH enabled: true) before recovering its deliveries`,
    );
  const now = deps.now();
  const window = recoveryWindow(body, now);
  const count = () => countMatches(deps.table, { endpointId: endpoint.endpointId, ...window });
  if (body.dryRun) return count();

  const inProgress = (jobId: string | null) =>
    new AppError(
      'RecoveryInProgress',
      `${jobId ? `Recovery job ${jobId}` : 'A recovery'} of endpoint ${endpoint.endpointId} is still running; cancel it or wait for it to finish`,
    );
  const running = await runningRecoveryOf(deps.table, endpoint.endpointId);
  if (running) throw inProgress(running);
  const jobQueue = deps.jobQueue;
  if (!jobQueue) throw new Error('This function has no jobs queue (JOB_QUEUE_URL)');
  const job = newRecoveryJob(
    { workspace: caller.workspace, endpointId: endpoint.endpointId, actor: callerActor(caller), count: await count(), window },
    now,
  );
  // The lock and the workspace's slot are taken in the same transaction as the job: concurrent requests cannot exceed either.
  const limit = jobsPerWorkspace(deps);
  const created = await createRecoveryJob(deps.table, job, now, limit);
  if (created === 'endpoint_busy') throw inProgress(await runningRecoveryOf(deps.table, endpoint.endpointId));
  if (created === 'workspace_full')
    throw new AppError(
      'Conflict',
      `Workspace ${caller.workspace} has ${limit} recovery jobs running, as many as it may; wait for one to finish or cancel one`,
      { limit },
    );
  try {
    await jobQueue.send({ jobId: job.jobId });
  } catch (error) {
    // A job that can never run must not hold the endpoint: end it (failed), then report the error.
    await finishJob(deps.table, job, 'failed', callerActor(caller), deps.now(), { reason: 'not_started' });
    throw error;
  }
  deps.metrics?.add('recoveryJobs', 1, {});
  return toJobWire(job);
};

/** GET .../jobs/{jobId} */
export const getJob: OperationImpl<'getJob'> = async (deps, caller, { params }) =>
  toJobWire(await jobOf(deps, caller.workspace, params.jobId));

/** POST .../jobs/{jobId}/cancel: a running job stops before its next replay; a finished one is answered as it is. */
export const cancelJob: OperationImpl<'cancelJob'> = async (deps, caller, { params }) => {
  const job = await jobOf(deps, caller.workspace, params.jobId);
  if (job.status !== 'running') return toJobWire(job);
  const cancelled = await finishJob(deps.table, job, 'cancelled', callerActor(caller), deps.now());
  // Null: the job finished between the read and the cancel; answer how it ended.
  return toJobWire(cancelled ?? (await jobOf(deps, caller.workspace, params.jobId)));
};
