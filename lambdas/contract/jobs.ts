/**
 * Wire shapes of recovery jobs (docs/behaviour.md#recovery-jobs): the recover
 * request, its dry-run answer and the job resource. Zod-free: the statuses; the zod schemas are in
 * `job-schemas.ts`.
 */
import type { DeliveryStatus } from './schemas';
export type { Job } from './job-schemas';

/** Statuses a recovery may select: the replayable ones. */
export const RECOVERABLE_STATUSES = ['failed', 'failed_permanent', 'dead_lettered'] as const satisfies readonly DeliveryStatus[];

/** Statuses a recovery selects when the request names none: the deliveries that will not be retried. */
export const DEFAULT_RECOVERY_STATUSES = ['failed_permanent', 'dead_lettered'] as const satisfies readonly DeliveryStatus[];

/** Statuses of a job. */
export const JOB_STATUSES = ['running', 'completed', 'cancelled', 'failed'] as const;

/** A job's status. */
export type JobStatus = (typeof JOB_STATUSES)[number];

/**
 * Deliveries of the window a recover count looks at, at most (docs/behaviour.md#recovery-jobs): the
 * count is exact up to there; past it the answer says `matchedAtLeast: true`, so a dry run costs the
 * same bounded reads whatever the backlog.
 */
export const RECOVERY_COUNT_CAP = 1000;

/** Recovery jobs one workspace may have running at once unless the stage's `recoveryJobsPerWorkspace` says otherwise. */
export const DEFAULT_RECOVERY_JOBS_PER_WORKSPACE = 3;

/** The bounds of the `recoveryJobsPerWorkspace` stage setting. */
export const RECOVERY_JOBS_PER_WORKSPACE_BOUNDS = { min: 1, max: 100 } as const;
