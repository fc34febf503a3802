/**
 * Recovery jobs' rules (docs/behaviour.md#recovery-jobs): the job record and
 * its factory, the window a job fixes at creation, the id range that window
 * covers, and the pacing of its slices. Pure: the store writes, the worker runs.
 */
import { encodeTime } from 'ulid';
import { DEFAULT_RECOVERY_RATE_PER_SECOND, ENV, RECOVERY_RATE_BOUNDS } from '../contract/deployment';
import { DEFAULT_RECOVERY_STATUSES, type Job, type JobStatus } from '../contract/jobs';
import type { AuditActor, DeliveryStatus } from '../contract/schemas';
import { newId } from './ids';

/** How long one slice's replays are spread over: a slice of `rate` replays, then the next one at least this much later. */
export const SLICE_INTERVAL_MS = 1000;

/** The rate of an environment: `RECOVERY_RATE_PER_SECOND` when valid, else the default. */
export function recoveryRateFrom(env: Readonly<Record<string, string | undefined>>): number {
  const n = Number(env[ENV.RECOVERY_RATE_PER_SECOND]);
  return Number.isInteger(n) && n >= RECOVERY_RATE_BOUNDS.min && n <= RECOVERY_RATE_BOUNDS.max ? n : DEFAULT_RECOVERY_RATE_PER_SECOND;
}

/** A job as stored: the wire form plus what the worker keeps on it. */
export interface JobRecord extends Job {
  readonly workspace: string;
  /** Who started it, the actor of its audit events: the token with its name, or its id alone (docs/behaviour.md#audit-events). */
  readonly actor: AuditActor | string;
  /** The last source delivery id the job has passed (the scan resumes after it); null before the first. */
  readonly cursor: string | null;
  /** Bumped by every change; each change is conditional on it, so two workers can never both advance the job. */
  readonly version: number;
  /** The earliest time the next slice may start (the pacing). */
  readonly nextSliceAt: string;
  /** True when the job holds one of its workspace's running-job slots (every job created with the limit does). */
  readonly slotted: boolean;
}

/** What a recover request asks for. */
export interface RecoverRequest {
  readonly since: string;
  readonly until?: string;
  readonly statuses?: readonly DeliveryStatus[];
  readonly includeReplayed?: boolean;
}

/** A bounded count of a recovery's matches (docs/behaviour.md#recovery-jobs). */
export interface RecoveryCount {
  readonly matched: number;
  /** True when the count stopped at its cap: both counts are lower bounds. */
  readonly matchedAtLeast: boolean;
  /** Matches left out because they are replays themselves and the request did not include them. */
  readonly skippedReplayed: number;
}

/**
 * The window and statuses a job fixes when it is created: `until` at most (and by default) now;
 * `since` before 1970 is clamped to 1970, as the delivery log clamps it (no delivery is older).
 */
export function recoveryWindow(
  request: RecoverRequest,
  now: Date,
): { since: string; until: string; statuses: Job['statuses']; includeReplayed: boolean } {
  const since = new Date(Math.max(0, Date.parse(request.since))).toISOString();
  const asked = request.until === undefined ? now.getTime() : Math.min(Date.parse(request.until), now.getTime());
  const statuses = [...new Set(request.statuses ?? DEFAULT_RECOVERY_STATUSES)] as Job['statuses'];
  return { since, until: new Date(asked).toISOString(), statuses, includeReplayed: request.includeReplayed === true };
}

/** A new running job, with nothing replayed yet. */
export function newRecoveryJob(
  input: {
    workspace: string;
    endpointId: string;
    actor: AuditActor | string;
    count: RecoveryCount;
    window: ReturnType<typeof recoveryWindow>;
  },
  now: Date,
): JobRecord {
  const iso = now.toISOString();
  return {
    jobId: newId('whj', now),
    kind: 'recover',
    workspace: input.workspace,
    endpointId: input.endpointId,
    actor: input.actor,
    status: 'running',
    ...input.window,
    ...input.count,
    replayed: 0,
    skipped: 0,
    createdAt: iso,
    updatedAt: iso,
    finishedAt: null,
    cursor: null,
    version: 0,
    nextSliceAt: iso,
    slotted: true,
  };
}

/**
 * How long a running job's slot in its workspace stays taken without the job's worker renewing it
 * (each slice renews it): a job whose worker died without finishing frees its slot after this.
 */
export const RECOVERY_SLOT_LEASE_MS = 10 * 60_000;

/**
 * The delivery ids created in [since, until]: a delivery id's time part is its
 * creation time (docs/architecture.md#identifiers), so the window is an id range.
 */
export function recoveryWindowIdRange(since: string, until: string): { from: string; to: string } {
  // The lowest id of `since`'s millisecond and the highest of `until`'s ('Z' is the last base32 digit).
  return { from: `whd_${encodeTime(Date.parse(since), 10)}`, to: `whd_${encodeTime(Date.parse(until), 10)}${'Z'.repeat(16)}` };
}

/** True for a status the job no longer changes. */
export function isFinished(status: JobStatus): boolean {
  return status !== 'running';
}

/** How long a slice must wait before it may replay (ms, 0 when due). */
export function sliceWaitMs(job: Pick<JobRecord, 'nextSliceAt'>, now: Date): number {
  return Math.max(0, Date.parse(job.nextSliceAt) - now.getTime());
}
