/**
 * A recovery worker that runs out of time (lambdas/pipeline/recovery-worker.ts runJobMessage), on
 * DynamoDB Local: a slice still running shortly before the invocation's timeout is given up, retried
 * on an earlier receive, and on the message's last receive the job ends `failed` with the reason
 * `worker_timed_out`, its endpoint's lock released, so a new recovery of the endpoint can start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOB_WORKER_CONSUMER } from '../../lambdas/contract/deployment';
import type { DeliveryStatus } from '../../lambdas/contract/schemas';
import { newHeldDelivery } from '../../lambdas/domain/delivery-lifecycle';
import type { Caller, OperationDeps } from '../../lambdas/operations/context';
import { getJob, recoverWebhookDeliveries } from '../../lambdas/operations/recovery';
import {
  JOB_FAILURE_REASONS,
  runJobMessage,
  SLICE_DEADLINE_MARGIN_MS,
  SliceTimedOut,
  type RecoveryWorkerDeps,
} from '../../lambdas/pipeline/recovery-worker';
import type { JobMessage, JobQueue } from '../../lambdas/queue/job-queue';
import { listAuditEvents } from '../../lambdas/store/audit';
import { summaryItem } from '../../lambdas/store/deliveries';
import { listDeliveriesOfEndpoint } from '../../lambdas/store/delivery-log';
import { batchWriteAll } from '../../lambdas/store/table-io';
import { capturingQueue, seedEndpoint, testCatalogue, testSealer } from '../helpers/pipeline';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

/** A recent whole minute that only moves when the worker sleeps (deliveries expire 31 days after creation). */
function fakeClock() {
  let t = Math.floor(Date.now() / 60_000) * 60_000 - 3600_000;
  return { now: () => new Date(t), sleep: async (ms: number) => void (t += ms) };
}

function capturingJobQueue(): JobQueue & { sent: JobMessage[] } {
  const sent: JobMessage[] = [];
  return { sent, send: async (message) => void sent.push(message) };
}

/** A jobs queue whose send never answers: the slice that sends the next one hangs until the invocation times out. */
const hangingJobQueue: JobQueue = { send: () => new Promise<void>(() => undefined) };

const caller = (workspace: string): Caller => ({ workspace, tokenId: 'tok_test', scopes: ['admin'] });

/** An endpoint with `count` dead-lettered deliveries, and a running recovery of them. */
async function runningRecovery(workspace: string, count: number) {
  const clock = fakeClock();
  const jobQueue = capturingJobQueue();
  const deps: OperationDeps = {
    table,
    now: clock.now,
    eventTypes: testCatalogue,
    urlPolicy: {},
    queue: capturingQueue(),
    jobQueue,
    secretSealer: testSealer,
  };
  const ep = await seedEndpoint(table, { workspace, url: 'https://a.example.com' }, clock.now());
  const at = new Date(clock.now().getTime() - 60_000);
  const statuses: DeliveryStatus[] = Array.from({ length: count }, () => 'dead_lettered');
  await batchWriteAll(
    table,
    statuses.map((status, i) => ({
      PutRequest: {
        Item: summaryItem({
          ...newHeldDelivery({ workspace, endpointId: ep.endpointId, eventType: 'order.shipped', payload: { i } }, at),
          status,
        }),
      },
    })),
  );
  const input = { params: { slug: workspace, endpointId: ep.endpointId }, query: undefined, body: { since: at.toISOString() } };
  const job = (await recoverWebhookDeliveries(deps, caller(workspace), input)) as { jobId: string; status: string };
  expect(job.status).toBe('running');
  // One replay per slice, so every slice but the last sends the next one.
  const worker = (jobQueue: JobQueue): RecoveryWorkerDeps => ({
    table,
    queue: capturingQueue(),
    jobQueue,
    now: clock.now,
    sleep: clock.sleep,
    ratePerSecond: 1,
  });
  const read = async () =>
    (await getJob(deps, caller(workspace), { params: { slug: workspace, jobId: job.jobId }, query: undefined, body: undefined })) as {
      status: string;
      finishedAt: string | null;
      replayed: number;
    };
  return { deps, ep, input, job, worker, read, jobQueue };
}

/** A receive with `ms` of the invocation's time left beyond the margin the worker keeps back. */
const receive = (count: number, ms = 1_000) => ({
  count,
  maxReceives: JOB_WORKER_CONSUMER.maxReceives,
  remainingMs: SLICE_DEADLINE_MARGIN_MS + ms,
});

describe('a recovery worker that runs out of time', () => {
  it('on the last receive ends the job failed (worker_timed_out) before the timeout, and frees its endpoint for a new recovery', async () => {
    const { deps, input, job, worker, read } = await runningRecovery('rec-timeout', 3);
    const started = Date.now();
    const result = await runJobMessage(worker(hangingJobQueue), job.jobId, receive(JOB_WORKER_CONSUMER.maxReceives));
    // Given up at the deadline, well before the invocation's remaining time ran out.
    expect(Date.now() - started).toBeLessThan(SLICE_DEADLINE_MARGIN_MS);
    expect(result).toMatchObject({ kind: 'retry', jobFailed: true });
    expect((result as { error: unknown }).error).toBeInstanceOf(SliceTimedOut);

    const ended = await read();
    expect(ended).toMatchObject({ status: 'failed' });
    expect(ended.finishedAt).not.toBeNull();
    const finished = (await listAuditEvents(table, 'rec-timeout', 100)).items.find((a) => a.action === 'webhook.recovery_finished');
    expect(finished?.detail).toEqual({ jobId: job.jobId, status: 'failed', reason: JOB_FAILURE_REASONS.timeout });
    expect(JOB_FAILURE_REASONS.timeout).toBe('worker_timed_out');

    // The lock is released: a new recovery of the endpoint starts (202 running), not 409 RecoveryInProgress.
    const next = (await recoverWebhookDeliveries(deps, caller('rec-timeout'), input)) as { jobId: string; status: string };
    expect(next).toMatchObject({ status: 'running' });
    expect(next.jobId).not.toBe(job.jobId);
  });

  it('on an earlier receive leaves the job running for the next receive, which goes on without replaying a source twice', async () => {
    const { ep, job, worker, read, jobQueue } = await runningRecovery('rec-retry', 3);
    const first = await runJobMessage(worker(hangingJobQueue), job.jobId, receive(1));
    expect(first).toMatchObject({ kind: 'retry', jobFailed: false });
    expect((await read()).status).toBe('running');

    // The retried message, with a jobs queue that answers: the job runs to the end.
    const working = worker(jobQueue);
    jobQueue.sent.length = 0;
    let result = await runJobMessage(working, job.jobId, receive(2));
    for (let i = 0; i < 10 && jobQueue.sent.length > 0; i++)
      result = await runJobMessage(working, jobQueue.sent.shift()!.jobId, receive(1));
    expect(result).toMatchObject({ kind: 'done', outcome: { kind: 'finished', status: 'completed' } });
    expect(await read()).toMatchObject({ status: 'completed', replayed: 3 });
    const replays = (await listDeliveriesOfEndpoint(table, ep.endpointId, 100)).items.filter((d) => d.replayedFrom);
    expect(new Set(replays.map((r) => r.replayedFrom)).size).toBe(3);
    expect(replays).toHaveLength(3);
  });

  it('ends the job failed (worker_error) when the slice throws on the last receive', async () => {
    const { job, worker, read } = await runningRecovery('rec-error', 3);
    const failing: JobQueue = { send: () => Promise.reject(new Error('SQS is down')) };
    const result = await runJobMessage(worker(failing), job.jobId, receive(JOB_WORKER_CONSUMER.maxReceives));
    expect(result).toMatchObject({ kind: 'retry', jobFailed: true });
    expect((await read()).status).toBe('failed');
    const finished = (await listAuditEvents(table, 'rec-error', 100)).items.find((a) => a.action === 'webhook.recovery_finished');
    expect(finished?.detail).toMatchObject({ status: 'failed', reason: 'worker_error' });
  });
});
