/**
 * The erasure job's slices on DynamoDB Local with an injected clock: a large workspace takes many
 * paced slices with its progress visible between them, a duplicated message ends one of the two
 * chains, a slice that fails mid-way is retried and every item is counted once, and a job whose
 * slices keep failing is failed (the slug stays reserved) and resumed by a new start.
 */
import { GetCommand, ScanCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newPendingDelivery } from '../../lambdas/domain/delivery-lifecycle';
import { issueToken } from '../../lambdas/operations/admin';
import type { OperationDeps } from '../../lambdas/operations/context';
import { getErasureJob, startWorkspaceErasure } from '../../lambdas/operations/workspace-erasure';
import { runJobMessage, runRecoverySlice, type RecoveryWorkerDeps, type SliceOutcome } from '../../lambdas/pipeline/recovery-worker';
import type { JobMessage, JobQueue } from '../../lambdas/queue/job-queue';
import type { TableContext } from '../../lambdas/store/client';
import { summaryItem } from '../../lambdas/store/deliveries';
import { ERASURE_DELIVERIES_PER_SLICE, ERASURE_ITEMS_PER_SLICE, eraseStep, getErasureRecord } from '../../lambdas/store/workspace-erasure';
import { findTokenByHash } from '../../lambdas/store/api-tokens';
import { hashApiToken } from '../../lambdas/domain/api-tokens';
import { batchWriteAll } from '../../lambdas/store/table-io';
import { createWorkspace } from '../../lambdas/store/workspaces';
import { capturingQueue, seedEndpoint, testCatalogue, testSealer } from '../helpers/pipeline';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

const PRINCIPAL = 'arn:aws:iam::123456789012:role/platform-backend';

/** A clock that only moves when the worker sleeps (or the test says so). */
function fakeClock(start = Math.floor(Date.now() / 60_000) * 60_000 - 3600_000) {
  let t = start;
  return { now: () => new Date(t), sleep: async (ms: number) => void (t += ms) };
}

function capturingJobQueue(): JobQueue & { sent: { message: JobMessage; delaySeconds: number }[] } {
  const sent: { message: JobMessage; delaySeconds: number }[] = [];
  return { sent, send: async (message, delaySeconds = 0) => void sent.push({ message, delaySeconds }) };
}

function setup() {
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
  const worker = (t: TableContext = table): RecoveryWorkerDeps => ({
    table: t,
    queue: capturingQueue(),
    jobQueue,
    now: clock.now,
    sleep: clock.sleep,
    ratePerSecond: 20,
  });
  return { clock, jobQueue, deps, worker };
}

/** A workspace with an endpoint, a token and `count` deliveries (their summaries). */
async function seedLarge(slug: string, count: number, now: Date) {
  const ep = await seedEndpoint(table, { workspace: slug, url: 'https://hooks.example.com/large' }, now);
  await issueToken(table, slug, { name: 'admin', scopes: ['admin'] }, now);
  const records = Array.from({ length: count }, (_, i) =>
    newPendingDelivery({ workspace: slug, endpointId: ep.endpointId, eventType: 'order.shipped', payload: { orderId: `o${i}` } }, now),
  );
  await batchWriteAll(
    table,
    records.map((r) => ({ PutRequest: { Item: summaryItem(r) } })),
  );
  return records;
}

/** A table whose `send` runs each command, then throws for those `lost` picks: the request was done, its answer never came. */
function losingAnswers(t: TableContext, lost: (command: unknown) => boolean): TableContext {
  const doc = new Proxy(t.doc, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver) as unknown;
      return async (command: Parameters<typeof target.send>[0]) => {
        const out = await target.send(command);
        if (lost(command)) throw new Error('injected: the answer was lost');
        return out;
      };
    },
  });
  return { ...t, doc };
}

/** A transaction of the erasure that deletes items (and counts them). */
const deletes = (command: unknown): command is TransactWriteCommand =>
  command instanceof TransactWriteCommand && (command.input.TransactItems ?? []).some((item) => item.Delete);

const deletesDeliveries = (command: unknown) => deletes(command) && JSON.stringify(command.input.TransactItems).includes('"DLV#');

/** Items of the table still naming `slug` anywhere, the platform's records of its erasure left out. */
async function leftOf(slug: string, ids: readonly string[] = []): Promise<unknown[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await table.doc.send(new ScanCommand({ TableName: table.tableName, ConsistentRead: true, ExclusiveStartKey: start }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items.filter((i) => i.pk !== 'PLATFORM' && [slug, ...ids].some((n) => JSON.stringify(i).includes(n)));
}

/** Runs the queued slices to the end (bounded), as the jobs queue would hand them over. */
async function drain(worker: RecoveryWorkerDeps, jobQueue: ReturnType<typeof capturingJobQueue>, max = 200): Promise<SliceOutcome[]> {
  const outcomes: SliceOutcome[] = [];
  for (let i = 0; i < max && jobQueue.sent.length > 0; i++)
    outcomes.push(await runRecoverySlice(worker, jobQueue.sent.shift()!.message.jobId));
  expect(jobQueue.sent, 'every slice ran').toHaveLength(0);
  return outcomes;
}

describe('erasure slices', () => {
  // Several slices' worth, each delivery its own partition read (DynamoDB Local takes about 20 ms a delivery here).
  const DELIVERIES = 6 * ERASURE_DELIVERIES_PER_SLICE;

  it('erases a large workspace in many paced slices, its progress visible between them; a duplicated message ends one chain', async () => {
    const { clock, jobQueue, deps, worker } = setup();
    const records = await seedLarge('bulk', DELIVERIES, clock.now());
    const job = await startWorkspaceErasure(deps, 'bulk', PRINCIPAL);
    expect(jobQueue.sent).toEqual([{ message: { jobId: job.jobId }, delaySeconds: 0 }]);

    const progress: number[] = [];
    const outcomes: SliceOutcome[] = [];
    for (let slice = 0; jobQueue.sent.length > 0 && slice < 100; slice++) {
      const { jobId } = jobQueue.sent.shift()!.message;
      if (slice === 3) {
        // The same message twice at once (SQS delivers at least once): one chain goes on, the other ends.
        const twin = await Promise.all([runRecoverySlice(worker(), jobId), runRecoverySlice(worker(), jobId)]);
        expect(twin.map((o) => o.kind).sort()).toEqual(['continued', 'ignored']);
        expect(jobQueue.sent).toHaveLength(1);
        outcomes.push(...twin.filter((o) => o.kind === 'continued'));
      } else outcomes.push(await runRecoverySlice(worker(), jobId));
      const seen = await getErasureJob(deps, jobId);
      progress.push(seen!.erased.deliveries!);
      if (seen!.status === 'running') {
        expect(await createWorkspace(table, { slug: 'bulk', name: 'again' }, clock.now()), 'the slug stays taken').toBe(false);
        // Paced: the next slice is queued a second later.
        expect(jobQueue.sent.map((m) => m.delaySeconds)).toEqual([1]);
      }
    }
    expect(outcomes.at(-1)).toEqual({ kind: 'finished', status: 'completed', replayed: 0 });
    expect(outcomes.length, 'slices').toBeGreaterThanOrEqual(DELIVERIES / ERASURE_DELIVERIES_PER_SLICE);
    // Progress seen between slices: growing, never all at once, and exactly every delivery at the end.
    const midway = progress.filter((n) => n > 0 && n < DELIVERIES);
    expect(midway.length).toBeGreaterThanOrEqual(DELIVERIES / ERASURE_DELIVERIES_PER_SLICE - 2);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    const done = await getErasureJob(deps, job.jobId);
    expect(done).toMatchObject({ status: 'completed', erased: { deliveries: DELIVERIES, endpoints: 1, tokens: 1, subscriptions: 2 } });
    expect(
      await leftOf(
        'bulk',
        records.map((r) => r.deliveryId),
      ),
    ).toEqual([]);
    expect(await createWorkspace(table, { slug: 'bulk', name: 'again' }, clock.now())).toBe(true);
  }, 120_000);

  it('retries a slice that failed mid-way, counting every item it deleted once', async () => {
    const { clock, jobQueue, deps, worker } = setup();
    const records = await seedLarge('flaky', 600, clock.now());
    const job = await startWorkspaceErasure(deps, 'flaky', PRINCIPAL);
    // Run to the deliveries phase, then lose the answer of one batch of deletes: done, and counted with its delete.
    let lostOne = false;
    const flaky = worker(
      losingAnswers(table, (command) => {
        if (lostOne || !deletesDeliveries(command)) return false;
        return (lostOne = true);
      }),
    );
    let result: Awaited<ReturnType<typeof runJobMessage>> | undefined;
    while (!lostOne && jobQueue.sent.length > 0) {
      result = await runJobMessage(flaky, jobQueue.sent.shift()!.message.jobId, { count: 1, maxReceives: 5, remainingMs: 60_000 });
    }
    expect(result).toMatchObject({ kind: 'retry', jobFailed: false });
    const before = (await getErasureJob(deps, job.jobId))!;
    expect(before.status).toBe('running');
    // The message comes back (SQS retries it), and the job goes on to the end.
    jobQueue.sent.push({ message: { jobId: job.jobId }, delaySeconds: 0 });
    await drain(worker(), jobQueue);
    const done = (await getErasureJob(deps, job.jobId))!;
    expect(done.status).toBe('completed');
    // The batch whose answer was lost is counted once, like every other.
    expect(done.erased.deliveries).toBe(600);
    expect(
      await leftOf(
        'flaky',
        records.map((r) => r.deliveryId),
      ),
    ).toEqual([]);
  });

  it('erases a credential written while the erasure runs, with its hash item, so it never resolves in a new workspace of the slug', async () => {
    const { clock, deps } = setup();
    await seedLarge('late', 1, clock.now());
    const job = (await getErasureRecord(table, (await startWorkspaceErasure(deps, 'late', PRINCIPAL)).jobId))!;
    // A token minted after the start (and after the token phase): only the partition's generic pass can find it.
    const late = await issueToken(table, 'late', { name: 'late', scopes: ['admin'] }, clock.now());
    expect(await findTokenByHash(table, hashApiToken(late.token))).not.toBeNull();
    const step = await eraseStep(table, { ...job, phase: 'workspace' }, ERASURE_ITEMS_PER_SLICE, clock.now);
    expect(step.done).toBe(true);
    expect(await findTokenByHash(table, hashApiToken(late.token))).toBeNull();
    // Both token items (the step skips ahead of the token phase, so the seeded one is still there), each counted once.
    expect((await getErasureRecord(table, job.jobId))!.erased.tokens).toBe(2);
  });

  it("ends a portal session's access at the start (its token's hash and its link's code) and erases the session", async () => {
    const { clock, jobQueue, deps, worker } = setup();
    await seedLarge('portal-ws', 1, clock.now());
    // A session as the portal sessions' store keeps it (lambdas/store/portal-sessions.ts): the session
    // in the workspace's partition naming its token's hash item and its link's code item.
    const tokenHash = 'a'.repeat(64);
    const codeHash = 'b'.repeat(64);
    await batchWriteAll(
      table,
      [
        { pk: 'WS#portal-ws', sk: 'PORTAL#wps_1', type: 'portal-session', sessionId: 'wps_1', tokenHash, codeHash },
        { pk: `TOKENHASH#${tokenHash}`, sk: 'META', type: 'session-hash', tokenId: 'wps_1', workspace: 'portal-ws', scopes: [] },
        { pk: `PORTALCODE#${codeHash}`, sk: 'META', type: 'portal-code', workspace: 'portal-ws', sessionId: 'wps_1' },
      ].map((Item) => ({ PutRequest: { Item } })),
    );
    expect(await findTokenByHash(table, tokenHash)).not.toBeNull();
    const job = await startWorkspaceErasure(deps, 'portal-ws', PRINCIPAL);
    expect(await findTokenByHash(table, tokenHash), 'the session no longer resolves').toBeNull();
    const codeItem = await table.doc.send(
      new GetCommand({ TableName: table.tableName, Key: { pk: `PORTALCODE#${codeHash}`, sk: 'META' } }),
    );
    expect(codeItem.Item, "the link's code is gone").toBeUndefined();
    await drain(worker(), jobQueue);
    expect((await getErasureJob(deps, job.jobId))!.erased).toMatchObject({ sessions: 1, tokens: 1 });
    expect(await leftOf('portal-ws', [tokenHash, codeHash, 'wps_1'])).toEqual([]);
  });

  it('fails a job whose slices keep failing, keeps its slug reserved, and resumes it on a new start', async () => {
    const { clock, jobQueue, deps, worker } = setup();
    const records = await seedLarge('stuck', 50, clock.now());
    const job = await startWorkspaceErasure(deps, 'stuck', PRINCIPAL);
    const broken = worker(losingAnswers(table, deletes));
    const { jobId } = jobQueue.sent.shift()!.message;
    expect(await runJobMessage(broken, jobId, { count: 4, maxReceives: 5, remainingMs: 60_000 })).toMatchObject({
      kind: 'retry',
      jobFailed: false,
    });
    expect(await runJobMessage(broken, jobId, { count: 5, maxReceives: 5, remainingMs: 60_000 })).toMatchObject({
      kind: 'retry',
      jobFailed: true,
    });
    const failed = (await getErasureJob(deps, jobId))!;
    expect(failed).toMatchObject({ status: 'failed', failureReason: 'worker_error' });
    expect(failed.finishedAt).not.toBeNull();
    expect(await createWorkspace(table, { slug: 'stuck', name: 'again' }, clock.now()), 'a failed erasure keeps the slug').toBe(false);

    // A new DELETE resumes the same job, from where it stopped.
    const resumed = await startWorkspaceErasure(deps, 'stuck', PRINCIPAL);
    expect(resumed).toMatchObject({ jobId: job.jobId, status: 'running', finishedAt: null });
    expect(resumed.failureReason).toBeUndefined();
    expect(jobQueue.sent).toHaveLength(1);
    await drain(worker(), jobQueue);
    expect((await getErasureJob(deps, jobId))!.status).toBe('completed');
    expect(
      await leftOf(
        'stuck',
        records.map((r) => r.deliveryId),
      ),
    ).toEqual([]);
  });
});
