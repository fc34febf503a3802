/** The workspace's list of its jobs (docs/behaviour.md#listing-jobs). */
import type { JobStatus } from '../contract/jobs';
import { clampLimit } from '../contract/pagination';
import { listWorkspaceJobs } from '../store/job-list';
import { getJobRecord, toJobWire } from '../store/recovery-jobs';
import type { OperationImpl } from './context';

/** GET /workspaces/{slug}/jobs: recovery jobs, newest first, optionally only those in the listed statuses. */
export const listJobs: OperationImpl<'listJobs'> = (deps, caller, { query }) =>
  listWorkspaceJobs(
    deps.table,
    caller.workspace,
    {
      limit: clampLimit(query.limit),
      cursor: query.cursor,
      // The contract's pattern admits only job statuses, comma-separated.
      statuses: query.status?.split(',') as JobStatus[] | undefined,
    },
    async (jobId) => {
      const job = await getJobRecord(deps.table, jobId);
      // The entry is in the workspace's own partition; the check keeps a job of another workspace out whatever happens.
      return job && job.workspace === caller.workspace ? toJobWire(job) : null;
    },
  );
