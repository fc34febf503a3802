/**
 * The recovery job worker (docs/architecture.md#recovery-jobs,
 * docs/behaviour.md#recovery-jobs): one jobs-queue message runs one slice of a
 * job, at most `ratePerSecond` replays, then the job is enqueued again for the
 * next slice a second later, until nothing matches any more (completed), it is
 * cancelled, or its endpoint is disabled or gone (failed). Each slice is
 * claimed with the job's version, so a redelivered or duplicated message
 * cannot run a second chain beside the first; each replay is one transaction
 * with its marker and the job's progress, so a crash resumes where it stopped.
 * The clock and the wait are adapters: tests pace without waiting.
 */
import { ENDPOINT_DISABLED } from '../domain/delivery-lifecycle';
import type { JobStatus } from '../contract/jobs';
import { SLICE_INTERVAL_MS, sliceWaitMs, type JobRecord } from '../domain/recovery';
import { replayOf } from '../operations/deliveries';
import type { DeliveryQueue } from '../queue/delivery-queue';
import type { JobQueue } from '../queue/job-queue';
import type { TableContext } from '../store/client';
import { getEndpointRecord } from '../store/endpoints';
import { claimSlice, finishJob, getJobRecord, getStoredJob, matchesAfter, moveCursor, replayForJob } from '../store/recovery-jobs';
import {
  advanceErasure,
  claimErasureSlice,
  completeErasure,
  ERASURE_ITEMS_PER_SLICE,
  ERASURE_PHASES,
  ErasureMoved,
  eraseStep,
  failErasure,
  getErasureRecord,
  type ErasureRecord,
} from '../store/workspace-erasure';
import {
  advancePurgeJob,
  deleteDeliveries,
  deleteEndpointHealth,
  deliveriesOfEndpointIndexes,
  type PurgeJob,
} from '../store/endpoint-purge';

/** Adapters and settings of the worker. */
export interface RecoveryWorkerDeps {
  readonly table: TableContext;
  /** The delivery queue: each replay's message. */
  readonly queue: DeliveryQueue;
  /** The jobs queue: the job's next slice. */
  readonly jobQueue: JobQueue;
  readonly now: () => Date;
  /** Waits `ms` (the pacing between slices); injected so tests advance a clock instead. */
  readonly sleep: (ms: number) => Promise<void>;
  /** Replays per second at most (the stage's `recoveryRatePerSecond`). */
  readonly ratePerSecond: number;
  /** Called when replay messages could not be sent (their rows stay pending: the stuck-pending repair sends them). */
  readonly onSendFailure?: (error: unknown, deliveryIds: readonly string[]) => void;
}

/** What one slice did. */
export type SliceOutcome =
  | { readonly kind: 'continued'; readonly replayed: number; readonly delaySeconds: number }
  | { readonly kind: 'finished'; readonly status: Exclude<JobStatus, 'running'>; readonly replayed: number }
  | { readonly kind: 'ignored'; readonly reason: 'not_found' | 'not_running' | 'moved' };

/** The actor of the worker's own decisions (a job failed because its endpoint went away). */
const SYSTEM_ACTOR = 'system';

/**
 * Runs one slice of a job. A `continued` outcome has already enqueued the
 * next slice; every other outcome ends this message's chain.
 */
export async function runRecoverySlice(deps: RecoveryWorkerDeps, jobId: string): Promise<SliceOutcome> {
  const stored = await getStoredJob(deps.table, jobId);
  if (!stored) {
    // Not a recovery or purge job: an erasure's, kept in the platform partition, or none.
    const erasure = await getErasureRecord(deps.table, jobId);
    return erasure ? runErasureSlice(deps, erasure) : { kind: 'ignored', reason: 'not_found' };
  }
  if (stored.kind === 'purge_endpoint') return runPurgeSlice(deps, stored.job);
  const read = stored.job;
  if (read.status !== 'running') return { kind: 'ignored', reason: 'not_running' };

  // Pacing: never start before the previous slice's second is over (a message delivered early waits it out).
  const wait = sliceWaitMs(read, deps.now());
  if (wait > 0) await deps.sleep(Math.min(wait, SLICE_INTERVAL_MS));
  const startedAt = deps.now();
  const claimed = await claimSlice(deps.table, read, new Date(startedAt.getTime() + SLICE_INTERVAL_MS), startedAt);
  // Another worker (a duplicate message) or a cancel moved the job since the read: that chain goes on, this one ends.
  if (!claimed) return { kind: 'ignored', reason: 'moved' };
  // A job that did not run for the slot's lease has lost its workspace slot (another job may hold it now): it stops.
  if (claimed === 'slot_lost') {
    const ended = await finishJob(deps.table, read, 'failed', SYSTEM_ACTOR, deps.now(), {
      expectedVersion: read.version,
      reason: 'slot_expired',
    });
    return ended ? { kind: 'finished', status: 'failed', replayed: 0 } : { kind: 'ignored', reason: 'moved' };
  }
  let job = claimed;

  const endpointGone = async (current: JobRecord, replayed: number): Promise<SliceOutcome> => {
    const endpoint = await getEndpointRecord(deps.table, current.workspace, current.endpointId);
    const ended = await finishJob(deps.table, current, 'failed', SYSTEM_ACTOR, deps.now(), {
      expectedVersion: current.version,
      reason: endpoint ? ENDPOINT_DISABLED : 'endpoint_deleted',
    });
    return ended ? { kind: 'finished', status: 'failed', replayed } : { kind: 'ignored', reason: 'moved' };
  };
  const endpoint = await getEndpointRecord(deps.table, job.workspace, job.endpointId);
  if (!endpoint || !endpoint.enabled) return endpointGone(job, 0);

  const batch = await matchesAfter(deps.table, job, deps.ratePerSecond);
  const sent: string[] = [];
  let stopped: 'lost' | 'endpoint_gone' | null = null;
  for (const source of batch.items) {
    const now = deps.now();
    const replay = replayOf(source, job.actor, now);
    const outcome = await replayForJob(deps.table, job, source, replay, now, batch.replayed.has(source.deliveryId));
    if (outcome.kind === 'lost' || outcome.kind === 'endpoint_gone') {
      stopped = outcome.kind;
      break;
    }
    job = outcome.job;
    if (outcome.kind === 'replayed') sent.push(replay.record.deliveryId);
  }
  await sendReplays(deps, sent);
  if (stopped === 'lost') return { kind: 'ignored', reason: 'moved' };
  // The endpoint was deleted or disabled during the slice: its replay transaction refused, and the job ends.
  if (stopped === 'endpoint_gone') return endpointGone(job, sent.length);

  if (batch.scannedTo) {
    const moved = await moveCursor(deps.table, job, batch.scannedTo, deps.now());
    if (!moved) return { kind: 'ignored', reason: 'moved' };
    job = moved;
  }
  if (batch.exhausted) {
    const ended = await finishJob(deps.table, job, 'completed', job.actor, deps.now(), { expectedVersion: job.version });
    return ended ? { kind: 'finished', status: 'completed', replayed: sent.length } : { kind: 'ignored', reason: 'moved' };
  }
  const delaySeconds = Math.ceil(sliceWaitMs(job, deps.now()) / 1000);
  await deps.jobQueue.send({ jobId }, delaySeconds);
  return { kind: 'continued', replayed: sent.length, delaySeconds };
}

/**
 * Deliveries one purge slice deletes at most (docs/behaviour.md#deleting-an-endpoint): each is a
 * query of its partition and a batch delete, a few at once, well within the worker's timeout.
 */
export const PURGE_DELIVERIES_PER_SLICE = 200;

/**
 * One slice of the purge of a deleted endpoint's history: at most
 * {@link PURGE_DELIVERIES_PER_SLICE} of its deliveries still in its indexes are deleted, then the
 * job is enqueued again for the next slice, paced like a recovery's; a slice that finds none
 * deletes the endpoint's health counters and completes the job.
 */
async function runPurgeSlice(deps: RecoveryWorkerDeps, read: PurgeJob): Promise<SliceOutcome> {
  if (read.status !== 'running') return { kind: 'ignored', reason: 'not_running' };
  const wait = sliceWaitMs(read, deps.now());
  if (wait > 0) await deps.sleep(Math.min(wait, SLICE_INTERVAL_MS));
  const ids = await deliveriesOfEndpointIndexes(deps.table, read.endpointId, PURGE_DELIVERIES_PER_SLICE);
  if (ids.length === 0) await deleteEndpointHealth(deps.table, read.endpointId);
  else await deleteDeliveries(deps.table, ids);
  const now = deps.now();
  const job = await advancePurgeJob(
    deps.table,
    read,
    { nextSliceAt: new Date(now.getTime() + SLICE_INTERVAL_MS), purged: ids.length, done: ids.length === 0 },
    now,
  );
  // Another worker (a duplicate message) moved the job: that chain goes on; the deletes done here are harmless.
  if (!job) return { kind: 'ignored', reason: 'moved' };
  if (job.status === 'completed') return { kind: 'finished', status: 'completed', replayed: 0 };
  const delaySeconds = Math.ceil(sliceWaitMs(job, deps.now()) / 1000);
  await deps.jobQueue.send({ jobId: job.jobId }, delaySeconds);
  return { kind: 'continued', replayed: 0, delaySeconds };
}

/**
 * One slice of a workspace's erasure (docs/behaviour.md#erasing-a-workspace): claimed at the job's
 * version, then steps of its phases, in order, until {@link ERASURE_ITEMS_PER_SLICE} items are
 * deleted or a phase has more left; then the job is enqueued again for the next slice, paced like
 * a recovery's so the table's other traffic goes first. A slice that reaches the end deletes the
 * workspace item and completes the job.
 */
async function runErasureSlice(deps: RecoveryWorkerDeps, read: ErasureRecord): Promise<SliceOutcome> {
  if (read.status !== 'running') return { kind: 'ignored', reason: 'not_running' };
  const wait = sliceWaitMs(read, deps.now());
  if (wait > 0) await deps.sleep(Math.min(wait, SLICE_INTERVAL_MS));
  const job = await claimErasureSlice(deps.table, read, deps.now());
  if (!job) return { kind: 'ignored', reason: 'moved' };
  let phase = job.phase;
  let cursor = job.cursor;
  let deleted = 0;
  try {
    for (;;) {
      const step = await eraseStep(deps.table, { ...job, phase, cursor }, ERASURE_ITEMS_PER_SLICE - deleted, deps.now);
      deleted += step.deleted;
      cursor = step.cursor;
      if (!step.done) break;
      if (phase === 'finish') {
        const completed = await completeErasure(deps.table, job, deps.now());
        return completed ? { kind: 'finished', status: 'completed', replayed: 0 } : { kind: 'ignored', reason: 'moved' };
      }
      phase = ERASURE_PHASES[ERASURE_PHASES.indexOf(phase) + 1]!;
      cursor = null;
      if (deleted >= ERASURE_ITEMS_PER_SLICE) break;
    }
  } catch (e) {
    // A duplicate message's worker claimed the job under this slice: that chain goes on (each batch deleted here was counted with its delete; the refused one was neither).
    if (e instanceof ErasureMoved) return { kind: 'ignored', reason: 'moved' };
    throw e;
  }
  const now = deps.now();
  const nextSliceAt = new Date(now.getTime() + SLICE_INTERVAL_MS);
  if (!(await advanceErasure(deps.table, job, { phase, cursor, nextSliceAt }, now))) return { kind: 'ignored', reason: 'moved' };
  const delaySeconds = Math.ceil(sliceWaitMs({ nextSliceAt: nextSliceAt.toISOString() }, deps.now()) / 1000);
  await deps.jobQueue.send({ jobId: job.jobId }, delaySeconds);
  return { kind: 'continued', replayed: 0, delaySeconds };
}

/** Queues the replays of a slice; a failure leaves them pending for the stuck-pending repair. */
async function sendReplays(deps: RecoveryWorkerDeps, deliveryIds: string[]): Promise<void> {
  if (deliveryIds.length === 0) return;
  try {
    await deps.queue.send(deliveryIds.map((deliveryId) => ({ deliveryId })));
  } catch (error) {
    deps.onSendFailure?.(error, deliveryIds);
  }
}

/**
 * Ends a job whose slices keep failing (the message's last receive): `failed`,
 * its lock released, so the endpoint can be recovered again (an erasure: its workspace stays
 * reserved). False when it was no longer running.
 */
async function failJob(deps: Pick<RecoveryWorkerDeps, 'table' | 'now'>, jobId: string, reason: string): Promise<boolean> {
  const job = await getJobRecord(deps.table, jobId);
  // Not a recovery job: an erasure's (its workspace then stays reserved until a new DELETE resumes it), or none.
  if (!job) return failErasure(deps.table, jobId, reason, deps.now());
  if (job.status !== 'running') return false;
  return (await finishJob(deps.table, job, 'failed', SYSTEM_ACTOR, deps.now(), { reason })) !== null;
}

/**
 * The time a job message keeps back from the invocation's remaining time: a slice still running
 * then is given up, so the worker, not Lambda's timeout, decides what happens to the job (one
 * read and one transaction fit well within it).
 */
export const SLICE_DEADLINE_MARGIN_MS = 5_000;

/** The `reason` of a job failed because its slice failed on every receive, by how the last one failed. */
export const JOB_FAILURE_REASONS = { error: 'worker_error', timeout: 'worker_timed_out' } as const;

/** A slice that did not finish before the invocation's deadline. */
export class SliceTimedOut extends Error {
  override readonly name = 'SliceTimedOut';
  constructor(readonly afterMs: number) {
    super(`The recovery slice did not finish within ${afterMs} ms, before the worker's timeout`);
  }
}

/** What became of one jobs-queue message. */
export type JobMessageResult =
  | { readonly kind: 'done'; readonly outcome: SliceOutcome }
  /** Retry the message (report it failed); on its last receive the job has been marked failed (`jobFailed`). */
  | { readonly kind: 'retry'; readonly error: unknown; readonly jobFailed: boolean };

/**
 * Runs the slice of one jobs-queue message within the invocation's remaining time. A slice that
 * throws, or is still running {@link SLICE_DEADLINE_MARGIN_MS} before the invocation would time
 * out, is retried by SQS; on the message's last receive (`maxReceives`) the job is marked failed
 * first, its lock released, so a job is never left `running` by a worker that ran out of time.
 * A slice given up may still finish its current step later; each step is conditional on the job's
 * version and status, so it then changes nothing.
 */
export async function runJobMessage(
  deps: RecoveryWorkerDeps,
  jobId: string,
  receive: { readonly count: number; readonly maxReceives: number; readonly remainingMs: number },
): Promise<JobMessageResult> {
  const budget = Math.max(0, receive.remainingMs - SLICE_DEADLINE_MARGIN_MS);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SliceTimedOut(budget)), budget);
  });
  try {
    return { kind: 'done', outcome: await Promise.race([runRecoverySlice(deps, jobId), deadline]) };
  } catch (error) {
    if (receive.count < receive.maxReceives) return { kind: 'retry', error, jobFailed: false };
    const reason = error instanceof SliceTimedOut ? JOB_FAILURE_REASONS.timeout : JOB_FAILURE_REASONS.error;
    return { kind: 'retry', error, jobFailed: await failJob(deps, jobId, reason) };
  } finally {
    clearTimeout(timer);
  }
}
