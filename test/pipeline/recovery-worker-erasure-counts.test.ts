/**
 * An erasure's report counts every item it erased exactly once, wherever a second slice of the same
 * job cuts in (a repeated DELETE before the first slice claimed the job sends its message again;
 * SQS delivers a message twice; a slice given up at its deadline goes on in a thawed Lambda) and
 * wherever a slice stops after a delete whose answer never came. The interleavings are injected
 * after each delete of the job's chain in turn, on DynamoDB Local with an injected clock; each
 * erased workspace, seeded alike (a recovery job with its markers among the rest), must report
 * what an erasure that ran alone reports.
 */
import { BatchWriteCommand, ScanCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryStatus } from '../../lambdas/contract/schemas';
import { newHeldDelivery } from '../../lambdas/domain/delivery-lifecycle';
import { issueToken } from '../../lambdas/operations/admin';
import type { Caller, OperationDeps } from '../../lambdas/operations/context';
import { getJob, recoverWebhookDeliveries } from '../../lambdas/operations/recovery';
import { getErasureJob, startWorkspaceErasure } from '../../lambdas/operations/workspace-erasure';
import { runJobMessage, runRecoverySlice, type RecoveryWorkerDeps } from '../../lambdas/pipeline/recovery-worker';
import type { JobMessage, JobQueue } from '../../lambdas/queue/job-queue';
import type { TableContext } from '../../lambdas/store/client';
import { summaryItem } from '../../lambdas/store/deliveries';
import { putNotification } from '../../lambdas/store/notifications';
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

const PRINCIPAL = 'arn:aws:iam::123456789012:role/platform-backend';

/** A clock that only moves when the worker sleeps (or the test says so); a recent minute, so no seeded TTL has passed. */
function fakeClock(start = Math.floor(Date.now() / 60_000) * 60_000 - 3600_000) {
  let t = start;
  return { now: () => new Date(t), sleep: async (ms: number) => void (t += ms), advance: (ms: number) => void (t += ms) };
}

function capturingJobQueue(): JobQueue & { sent: JobMessage[] } {
  const sent: JobMessage[] = [];
  return { sent, send: async (message) => void sent.push(message) };
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

/** Runs the queued job messages to the end (bounded), one at a time. */
async function drain(worker: RecoveryWorkerDeps, jobQueue: ReturnType<typeof capturingJobQueue>): Promise<void> {
  for (let i = 0; i < 100 && jobQueue.sent.length > 0; i++) await runRecoverySlice(worker, jobQueue.sent.shift()!.jobId);
  expect(jobQueue.sent, 'every slice ran').toHaveLength(0);
}

/**
 * A workspace as the CI run's: an endpoint (two subscriptions), a token, a notification, two failed
 * deliveries and a completed recovery job that replayed both (its item, markers and entry; the
 * replays with their links). Returns the erasure's job id, started and queued.
 */
async function seedAndStart(slug: string): Promise<{ jobId: string; env: ReturnType<typeof setup> }> {
  const env = setup();
  const { clock, jobQueue, deps, worker } = env;
  const ep = await seedEndpoint(table, { workspace: slug, url: 'https://hooks.example.com/erase' }, clock.now());
  await issueToken(table, slug, { name: 'admin', scopes: ['admin'] }, clock.now());
  await putNotification(table, slug, { kind: 'endpoint_disabled', message: 'seeded', endpointId: ep.endpointId }, clock.now());
  const before = new Date(clock.now().getTime() - 3_600_000);
  const sources = (['failed_permanent', 'failed_permanent'] as DeliveryStatus[]).map((status, i) => ({
    ...newHeldDelivery({ workspace: slug, endpointId: ep.endpointId, eventType: 'order.shipped', payload: { orderId: `o${i}` } }, before),
    status,
  }));
  await batchWriteAll(
    table,
    sources.map((r) => ({ PutRequest: { Item: summaryItem(r) } })),
  );
  clock.advance(1000);
  const caller: Caller = { workspace: slug, tokenId: 'tok_test', scopes: ['admin'] };
  const recovery = (await recoverWebhookDeliveries(deps, caller, {
    params: { slug, endpointId: ep.endpointId },
    query: undefined,
    body: { since: before.toISOString() },
  })) as { jobId: string };
  await drain(worker(), jobQueue);
  const job = (await getJob(deps, caller, { params: { slug, jobId: recovery.jobId }, query: undefined, body: undefined })) as {
    status: string;
    replayed: number;
  };
  expect(job).toMatchObject({ status: 'completed', replayed: 2 });
  const erasure = await startWorkspaceErasure(deps, slug, PRINCIPAL);
  expect(jobQueue.sent).toEqual([{ jobId: erasure.jobId }]);
  jobQueue.sent.length = 0;
  return { jobId: erasure.jobId, env };
}

/** True for a write of the erasure that deletes items (its own batches, or its end's transaction). */
const deletes = (command: unknown) =>
  (command instanceof BatchWriteCommand || command instanceof TransactWriteCommand) && JSON.stringify(command.input).includes('"Delete');

/**
 * A table whose `after` runs once the `nth` delete (see {@link deletes}) has been done, before its
 * answer is given back (or instead: `after` may throw, as if the answer was lost); `fired` says
 * whether the slice got that far.
 */
function afterNthDelete(t: TableContext, nth: number, after: () => Promise<void>): { table: TableContext; fired: () => boolean } {
  let seen = 0;
  const doc = new Proxy(t.doc, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver) as unknown;
      return async (command: Parameters<typeof target.send>[0]) => {
        const out = await target.send(command);
        if (deletes(command) && ++seen === nth) await after();
        return out;
      };
    },
  });
  return { table: { ...t, doc }, fired: () => seen >= nth };
}

/** Items of the table still naming `slug`, the platform's records of its erasure left out. */
async function leftOf(slug: string): Promise<unknown[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await table.doc.send(new ScanCommand({ TableName: table.tableName, ConsistentRead: true, ExclusiveStartKey: start }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items.filter((i) => i.pk !== 'PLATFORM' && JSON.stringify(i).includes(slug));
}

describe("an erasure's report", () => {
  /** What the erasure of a seeded workspace reports when its slices run alone. */
  let alone: Record<string, number>;
  beforeAll(async () => {
    const { jobId, env } = await seedAndStart('alone');
    env.jobQueue.sent.push({ jobId });
    await drain(env.worker(), env.jobQueue);
    const job = (await getErasureJob(env.deps, jobId))!;
    expect(job.status).toBe('completed');
    alone = job.erased;
    // The seeded recovery job, its markers and entry are there to count.
    expect(alone).toMatchObject({ endpoints: 1, subscriptions: 2, tokens: 1, notifications: 1, jobs: 1, deliveries: 4 });
    expect(await leftOf('alone')).toEqual([]);
  }, 60_000);

  it('counts each item once when a second message of the job runs a slice after any delete of the first', async () => {
    let cuts = 0;
    for (let nth = 1; ; nth++) {
      const slug = `twice-${String(nth).padStart(2, '0')}`;
      const { jobId, env } = await seedAndStart(slug);
      // The second message's slice runs whole between a delete of the first chain and its answer.
      const injected = afterNthDelete(table, nth, async () => void (await runRecoverySlice(env.worker(), jobId)));
      env.jobQueue.sent.push({ jobId });
      await drain(env.worker(injected.table), env.jobQueue);
      if (!injected.fired()) break;
      cuts++;
      const job = (await getErasureJob(env.deps, jobId))!;
      expect(job.status, slug).toBe('completed');
      expect.soft(job.erased, `the report with the second slice after delete ${nth}`).toEqual(alone);
      expect(await leftOf(slug)).toEqual([]);
    }
    // Every phase that deletes was cut into: subscriptions, jobs (partition, entry), deliveries, endpoints, tokens, the rest, the end.
    expect(cuts).toBeGreaterThanOrEqual(8);
  }, 120_000);

  it('counts each item once when a slice stops after a delete whose answer never came, and its message comes back', async () => {
    let cuts = 0;
    for (let nth = 1; ; nth++) {
      const slug = `lost-${String(nth).padStart(2, '0')}`;
      const { jobId, env } = await seedAndStart(slug);
      const injected = afterNthDelete(table, nth, async () => {
        throw new Error('injected: the answer was lost');
      });
      // The chain's slices, each message handed over again when its slice failed (as SQS does).
      const failed: unknown[] = [];
      env.jobQueue.sent.push({ jobId });
      for (let i = 0; i < 100 && env.jobQueue.sent.length > 0; i++) {
        const message = env.jobQueue.sent.shift()!;
        const result = await runJobMessage(env.worker(injected.table), message.jobId, { count: 1, maxReceives: 5, remainingMs: 60_000 });
        if (result.kind === 'retry') {
          failed.push(result.error);
          env.jobQueue.sent.push(message);
        }
      }
      expect(env.jobQueue.sent, 'every slice ran').toHaveLength(0);
      if (!injected.fired()) break;
      cuts++;
      expect(failed).toEqual([new Error('injected: the answer was lost')]);
      const job = (await getErasureJob(env.deps, jobId))!;
      expect(job.status, slug).toBe('completed');
      expect.soft(job.erased, `the report with the answer of delete ${nth} lost`).toEqual(alone);
      expect(await leftOf(slug)).toEqual([]);
    }
    expect(cuts).toBeGreaterThanOrEqual(8);
  }, 120_000);
});
