/**
 * The jobs queue port (docs/architecture.md#recovery-jobs): each message names
 * one job (`{jobId}`) and runs one paced slice of it; the slice re-enqueues the
 * job with a delay until it is done. SQS in the cloud, an in-process queue locally.
 * A job of any kind (a recovery, an endpoint's purge, a workspace's erasure) is
 * named by its id alone: the worker finds its kind from its item.
 */
import { idPattern } from '../contract/ids';

/** SQS's longest message delay, in seconds. */
export const MAX_JOB_DELAY_SECONDS = 900;

/** One queued job slice. */
export interface JobMessage {
  readonly jobId: string;
}

/** Sends job messages. */
export interface JobQueue {
  /** Enqueues one job message, visible after `delaySeconds` (0 to {@link MAX_JOB_DELAY_SECONDS}). */
  send(message: JobMessage, delaySeconds?: number): Promise<void>;
}

const JOB_ID = idPattern('whj');

/** Parses a message body; null when it is not a job message. */
export function parseJobMessage(body: string): JobMessage | null {
  try {
    const value = JSON.parse(body) as { jobId?: unknown };
    return typeof value?.jobId === 'string' && JOB_ID.test(value.jobId) ? { jobId: value.jobId } : null;
  } catch {
    return null;
  }
}
