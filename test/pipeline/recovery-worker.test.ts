/**
 * Recovery jobs on DynamoDB Local with an injected clock and sleep: the dry-run
 * count is what the job replays, pacing within the rate, cancel, resume after a
 * crash mid-job with no source replayed twice, duplicate messages, the 409s.
 */
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryStatus } from '../../lambdas/contract/schemas';
import { newHeldDelivery, type DeliveryRecord } from '../../lambdas/domain/delivery-lifecycle';
import type { Caller, OperationDeps } from '../../lambdas/operations/context';
import { cancelJob, getJob, recoverWebhookDeliveries } from '../../lambdas/operations/recovery';
import { runRecoverySlice, type RecoveryWorkerDeps } from '../../lambdas/pipeline/recovery-worker';
import type { JobMessage, JobQueue } from '../../lambdas/queue/job-queue';
import type { TableContext } from '../../lambdas/store/client';
import { getDelivery, stateItem, summaryItem } from '../../lambdas/store/deliveries';
import { listDeliveriesOfEndpoint } from '../../lambdas/store/delivery-log';
import { listAuditEvents } from '../../lambdas/store/audit';
import { updateEndpoint } from '../../lambdas/store/endpoints';
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

/** A clock that only moves when the worker sleeps (or the test says so). */
// A recent whole minute: deliveries expire by TTL 31 days after creation, and DynamoDB Local removes expired items.
function fakeClock(start = Math.floor(Date.now() / 60_000) * 60_000 - 3600_000) {
  let t = start;
  return {
    now: () => new Date(t),
    sleep: async (ms: number) => void (t += ms),
    advance: (ms: number) => void (t += ms),
  };
}

function capturingJobQueue(): JobQueue & { sent: { message: JobMessage; delaySeconds: number }[] } {
  const sent: { message: JobMessage; delaySeconds: number }[] = [];
  return { sent, send: async (message, delaySeconds = 0) => void sent.push({ message, delaySeconds }) };
}

function operationDeps(t: TableContext, clock: ReturnType<typeof fakeClock>, jobQueue: JobQueue): OperationDeps {
  return {
    table: t,
    now: clock.now,
    eventTypes: testCatalogue,
    urlPolicy: {},
    queue: capturingQueue(),
    jobQueue,
    secretSealer: testSealer,
  };
}

const caller = (workspace: string): Caller => ({ workspace, tokenId: 'tok_test', scopes: ['admin'] });

/** Source deliveries of an endpoint with the given statuses, created `ago` ms before the clock's now. */
async function seedSources(
  endpoint: { workspace: string; endpointId: string },
  statuses: DeliveryStatus[],
  at: Date,
): Promise<DeliveryRecord[]> {
  const records = statuses.map((status, i) => ({
    ...newHeldDelivery(
      { workspace: endpoint.workspace, endpointId: endpoint.endpointId, eventType: 'order.shipped', payload: { orderId: `o${i}` } },
      at,
    ),
    status,
  }));
  await batchWriteAll(
    table,
    records.map((r) => ({ PutRequest: { Item: summaryItem(r) } })),
  );
  return records;
}

/** Runs a job's queued slices to the end (bounded), as the jobs queue would hand them over. */
async function drain(worker: RecoveryWorkerDeps, jobQueue: ReturnType<typeof capturingJobQueue>, maxSlices = 100) {
  const outcomes = [];
  for (let i = 0; i < maxSlices && jobQueue.sent.length > 0; i++) {
    const { message } = jobQueue.sent.shift()!;
    outcomes.push(await runRecoverySlice(worker, message.jobId));
  }
  expect(jobQueue.sent, 'every slice ran').toHaveLength(0);
  return outcomes;
}

/** The replays among an endpoint's deliveries, as the endpoint's delivery list shows them. */
async function replaysOf(endpointId: string) {
  return (await listDeliveriesOfEndpoint(table, endpointId, 200)).items.filter((d) => d.replayedFrom);
}

function setup(rate: number) {
  const clock = fakeClock();
  const jobQueue = capturingJobQueue();
  const queue = capturingQueue();
  const worker: RecoveryWorkerDeps = { table, queue, jobQueue, now: clock.now, sleep: clock.sleep, ratePerSecond: rate };
  return { clock, jobQueue, queue, worker, deps: operationDeps(table, clock, jobQueue) };
}

describe('recovery jobs', () => {
  it('replays exactly what the dry run counted: the selected statuses in the window, as normal replays, at most rate per second', async () => {
    const { clock, jobQueue, queue, worker, deps } = setup(3);
    const ep = await seedEndpoint(table, { workspace: 'rec-count', url: 'https://a.example.com' }, clock.now());
    const before = new Date(clock.now().getTime() - 3_600_000);
    await seedSources(ep, ['failed_permanent'], new Date(before.getTime() - 3_600_000)); // before the window
    const inWindow = await seedSources(
      ep,
      ['failed_permanent', 'dead_lettered', 'failed_permanent', 'dead_lettered', 'failed_permanent', 'failed_permanent', 'dead_lettered'],
      before,
    );
    await seedSources(ep, ['delivered', 'failed', 'pending'], before); // not selected by default
    clock.advance(1000);
    const input = {
      params: { slug: 'rec-count', endpointId: ep.endpointId },
      query: undefined,
      body: { since: before.toISOString(), dryRun: true },
    };

    const dry = await recoverWebhookDeliveries(deps, caller('rec-count'), input);
    expect(dry).toEqual({ matched: inWindow.length, matchedAtLeast: false, skippedReplayed: 0 });
    expect(jobQueue.sent, 'a dry run starts nothing').toHaveLength(0);

    const job = (await recoverWebhookDeliveries(deps, caller('rec-count'), { ...input, body: { since: before.toISOString() } })) as any;
    expect(job).toMatchObject({
      kind: 'recover',
      endpointId: ep.endpointId,
      status: 'running',
      matched: inWindow.length,
      replayed: 0,
      skipped: 0,
      statuses: ['failed_permanent', 'dead_lettered'],
      until: clock.now().toISOString(),
      finishedAt: null,
    });
    expect(job.jobId).toMatch(/^whj_[0-9A-Z]{26}$/);

    const outcomes = await drain(worker, jobQueue);
    expect(outcomes.at(-1)).toMatchObject({ kind: 'finished', status: 'completed' });
    const done = (await getJob(deps, caller('rec-count'), {
      params: { slug: 'rec-count', jobId: job.jobId },
      query: undefined,
      body: undefined,
    })) as any;
    expect(done).toMatchObject({ status: 'completed', matched: 7, replayed: 7, skipped: 0 });
    expect(done.finishedAt).not.toBeNull();

    const replays = await replaysOf(ep.endpointId);
    expect(replays.map((r) => r.replayedFrom).sort()).toEqual(inWindow.map((s) => s.deliveryId).sort());
    for (const r of replays) expect(r).toMatchObject({ status: 'pending', attempts: 0, eventType: 'order.shipped' });
    expect(queue.sent.map((m) => m.deliveryId).sort()).toEqual(replays.map((r) => r.deliveryId).sort());

    // Pacing: no second holds more than `rate` replays, and 7 at 3 per second take three seconds' slices.
    const perSecond = new Map<string, number>();
    for (const r of replays) perSecond.set(r.createdAt.slice(0, 19), (perSecond.get(r.createdAt.slice(0, 19)) ?? 0) + 1);
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(3);
    expect(perSecond.size).toBe(3);

    const audit = (await listAuditEvents(table, 'rec-count', 100)).items.map((a) => a.action);
    expect(audit.filter((a) => a === 'webhook.delivery_replayed')).toHaveLength(7);
    expect(audit.filter((a) => a === 'webhook.recovery_started')).toHaveLength(1);
    expect(audit.filter((a) => a === 'webhook.recovery_finished')).toHaveLength(1);

    // Every source has a replay now: a later recovery of the same window replays nothing, and says why.
    const again = await recoverWebhookDeliveries(deps, caller('rec-count'), input);
    expect(again).toEqual({ matched: 0, matchedAtLeast: false, skippedReplayed: 7 });
  });

  it('takes `failed` when asked, and only one running recovery per endpoint (409 RecoveryInProgress), freed when the job ends', async () => {
    const { clock, jobQueue, worker, deps } = setup(20);
    const ep = await seedEndpoint(table, { workspace: 'rec-one', url: 'https://a.example.com' }, clock.now());
    const at = new Date(clock.now().getTime() - 1000);
    await seedSources(ep, ['failed', 'failed', 'dead_lettered'], at);
    const body = { since: at.toISOString(), statuses: ['failed' as const] };
    const input = { params: { slug: 'rec-one', endpointId: ep.endpointId }, query: undefined, body };
    const first = (await recoverWebhookDeliveries(deps, caller('rec-one'), input)) as any;
    expect(first).toMatchObject({ matched: 2, statuses: ['failed'] });
    await expect(recoverWebhookDeliveries(deps, caller('rec-one'), input)).rejects.toMatchObject({
      tag: 'RecoveryInProgress',
      status: 409,
    });
    await drain(worker, jobQueue);
    const second = (await recoverWebhookDeliveries(deps, caller('rec-one'), input)) as any;
    expect(second.jobId).not.toBe(first.jobId);
  });

  it('ends a job whose first message cannot be sent (failed), so the endpoint is not held by a job that never runs', async () => {
    const { clock, deps } = setup(20);
    const ep = await seedEndpoint(table, { workspace: 'rec-lost', url: 'https://a.example.com' }, clock.now());
    const input = { params: { slug: 'rec-lost', endpointId: ep.endpointId }, query: undefined, body: { since: '2026-01-01T00:00:00Z' } };
    const broken = { ...deps, jobQueue: { send: () => Promise.reject(new Error('SQS is down')) } };
    await expect(recoverWebhookDeliveries(broken, caller('rec-lost'), input)).rejects.toThrow('SQS is down');
    const finished = (await listAuditEvents(table, 'rec-lost', 100)).items.find((a) => a.action === 'webhook.recovery_finished');
    expect(finished?.detail).toMatchObject({ status: 'failed', reason: 'not_started' });
    expect(await recoverWebhookDeliveries(deps, caller('rec-lost'), input)).toMatchObject({ status: 'running' });
  });

  it('refuses a disabled endpoint (409 EndpointDisabled) and an unknown job (404 JobNotFound)', async () => {
    const { clock, deps } = setup(20);
    const ep = await seedEndpoint(table, { workspace: 'rec-off', url: 'https://a.example.com', enabled: false }, clock.now());
    const input = { params: { slug: 'rec-off', endpointId: ep.endpointId }, query: undefined, body: { since: '2026-01-01T00:00:00Z' } };
    await expect(recoverWebhookDeliveries(deps, caller('rec-off'), input)).rejects.toMatchObject({ tag: 'EndpointDisabled', status: 409 });
    await expect(
      recoverWebhookDeliveries(deps, caller('rec-off'), { ...input, body: { ...input.body, dryRun: true } }),
    ).rejects.toMatchObject({ tag: 'EndpointDisabled' });
    const params = { slug: 'rec-off', jobId: 'whj_01JD2YC5D6E7F8G9H0J1K2M3NP' };
    await expect(getJob(deps, caller('rec-off'), { params, query: undefined, body: undefined })).rejects.toMatchObject({
      tag: 'JobNotFound',
      status: 404,
    });
    await expect(cancelJob(deps, caller('rec-off'), { params, query: undefined, body: undefined })).rejects.toMatchObject({
      tag: 'JobNotFound',
    });
  });

  it('cancel stops a running job before its next replay, frees the endpoint and is answered again as it is', async () => {
    const { clock, jobQueue, worker, deps } = setup(2);
    const ep = await seedEndpoint(table, { workspace: 'rec-cancel', url: 'https://a.example.com' }, clock.now());
    const at = new Date(clock.now().getTime() - 1000);
    await seedSources(ep, Array<DeliveryStatus>(6).fill('dead_lettered'), at);
    const input = { params: { slug: 'rec-cancel', endpointId: ep.endpointId }, query: undefined, body: { since: at.toISOString() } };
    const job = (await recoverWebhookDeliveries(deps, caller('rec-cancel'), input)) as any;
    const first = jobQueue.sent.shift()!;
    expect(await runRecoverySlice(worker, first.message.jobId)).toMatchObject({ kind: 'continued', replayed: 2 });

    const params = { slug: 'rec-cancel', jobId: job.jobId };
    const cancelled = (await cancelJob(deps, caller('rec-cancel'), { params, query: undefined, body: undefined })) as any;
    expect(cancelled).toMatchObject({ status: 'cancelled', replayed: 2, matched: 6 });
    expect(cancelled.finishedAt).not.toBeNull();
    // The queued next slice finds the job cancelled and stops: nothing more is replayed.
    expect(await drain(worker, jobQueue)).toEqual([{ kind: 'ignored', reason: 'not_running' }]);
    expect(await replaysOf(ep.endpointId)).toHaveLength(2);
    expect(await cancelJob(deps, caller('rec-cancel'), { params, query: undefined, body: undefined })).toEqual(cancelled);
    const audit = (await listAuditEvents(table, 'rec-cancel', 100)).items.filter((a) => a.action === 'webhook.recovery_finished');
    expect(audit).toHaveLength(1);
    expect(audit[0]!.detail).toMatchObject({ jobId: job.jobId, status: 'cancelled' });
    // Another workspace cannot see the job.
    await expect(
      getJob(deps, caller('rec-other'), { params: { ...params, slug: 'rec-other' }, query: undefined, body: undefined }),
    ).rejects.toMatchObject({ tag: 'JobNotFound' });
    // The endpoint is free again; the two sources replayed before the cancel are left out.
    expect(await recoverWebhookDeliveries(deps, caller('rec-cancel'), input)).toMatchObject({
      status: 'running',
      matched: 4,
      skippedReplayed: 2,
    });
  });

  it('resumes after a crash mid-job (a fault after 3 replays) where it stopped, with no source replayed twice', async () => {
    const { clock, jobQueue, worker, deps } = setup(5);
    const ep = await seedEndpoint(table, { workspace: 'rec-crash', url: 'https://a.example.com' }, clock.now());
    const at = new Date(clock.now().getTime() - 1000);
    const sources = await seedSources(ep, Array<DeliveryStatus>(12).fill('failed_permanent'), at);
    const job = (await recoverWebhookDeliveries(deps, caller('rec-crash'), {
      params: { slug: 'rec-crash', endpointId: ep.endpointId },
      query: undefined,
      body: { since: at.toISOString() },
    })) as any;

    // A table whose 4th replay transaction dies (the process crashing mid-slice).
    let transactions = 0;
    const faulty: TableContext = {
      tableName: table.tableName,
      doc: {
        send: (command: unknown) => {
          // The fourth replay transaction (the slice's claim is a transaction too: only replays carry a ConditionCheck first).
          if (command instanceof TransactWriteCommand && command.input.TransactItems?.[0]?.ConditionCheck && ++transactions === 4)
            return Promise.reject(new Error('injected crash'));
          return table.doc.send(command as never);
        },
      } as unknown as TableContext['doc'],
    };
    const message = jobQueue.sent.shift()!;
    await expect(runRecoverySlice({ ...worker, table: faulty }, message.message.jobId)).rejects.toThrow('injected crash');
    expect(jobQueue.sent).toHaveLength(0);
    const mid = (await getJob(deps, caller('rec-crash'), {
      params: { slug: 'rec-crash', jobId: job.jobId },
      query: undefined,
      body: undefined,
    })) as any;
    expect(mid).toMatchObject({ status: 'running', replayed: 3 });

    // The queue hands the same message over again, twice at once (a redelivery and a duplicate).
    const both = await Promise.all([runRecoverySlice(worker, job.jobId), runRecoverySlice(worker, job.jobId)]);
    expect(both.map((o) => o.kind).sort()).toEqual(['continued', 'ignored']);
    await drain(worker, jobQueue);

    const replays = await replaysOf(ep.endpointId);
    const from = replays.map((r) => r.replayedFrom);
    expect(new Set(from).size, 'no source replayed twice').toBe(from.length);
    expect([...from].sort()).toEqual(sources.map((s) => s.deliveryId).sort());
    expect(
      await getJob(deps, caller('rec-crash'), { params: { slug: 'rec-crash', jobId: job.jobId }, query: undefined, body: undefined }),
    ).toMatchObject({
      status: 'completed',
      matched: 12,
      replayed: 12,
      skipped: 0,
    });
  });

  it('skips a match that changed between the scan and its replay, and fails the job when its endpoint is disabled meanwhile', async () => {
    const { clock, jobQueue, worker, deps } = setup(2);
    const ep = await seedEndpoint(table, { workspace: 'rec-skip', url: 'https://a.example.com' }, clock.now());
    const at = new Date(clock.now().getTime() - 1000);
    const sources = await seedSources(ep, Array<DeliveryStatus>(5).fill('dead_lettered'), at);
    const job = (await recoverWebhookDeliveries(deps, caller('rec-skip'), {
      params: { slug: 'rec-skip', endpointId: ep.endpointId },
      query: undefined,
      body: { since: at.toISOString() },
    })) as any;
    // The first match is delivered (say by an earlier replay of it) after the scan read it, just before its replay.
    let changed: DeliveryRecord | undefined;
    const racing: TableContext = {
      tableName: table.tableName,
      doc: {
        send: async (command: unknown) => {
          if (command instanceof TransactWriteCommand && command.input.TransactItems?.[0]?.ConditionCheck && !changed) {
            const pk = command.input.TransactItems?.[0]?.ConditionCheck?.Key?.pk as string;
            changed = sources.find((d) => `DLV#${d.deliveryId}` === pk)!;
            await batchWriteAll(table, [{ PutRequest: { Item: stateItem({ ...changed, status: 'delivered' }) } }]);
          }
          return table.doc.send(command as never);
        },
      } as unknown as TableContext['doc'],
    };
    expect(await runRecoverySlice({ ...worker, table: racing }, jobQueue.sent.shift()!.message.jobId)).toMatchObject({
      kind: 'continued',
      replayed: 1,
    });
    expect(
      await getJob(deps, caller('rec-skip'), { params: { slug: 'rec-skip', jobId: job.jobId }, query: undefined, body: undefined }),
    ).toMatchObject({ replayed: 1, skipped: 1 });
    expect((await replaysOf(ep.endpointId)).map((r) => r.replayedFrom)).not.toContain(changed!.deliveryId);
    expect(await getDelivery(table, changed!.deliveryId)).toMatchObject({ status: 'delivered' });

    await updateEndpoint(table, 'rec-skip', ep.endpointId, { enabled: false }, clock.now(), {
      action: 'webhook.updated',
      actor: 'test',
      targetId: ep.endpointId,
    });
    expect(await drain(worker, jobQueue)).toEqual([{ kind: 'finished', status: 'failed', replayed: 0 }]);
    const failed = (await getJob(deps, caller('rec-skip'), {
      params: { slug: 'rec-skip', jobId: job.jobId },
      query: undefined,
      body: undefined,
    })) as any;
    expect(failed).toMatchObject({ status: 'failed', matched: 5, replayed: 1, skipped: 1 });
    const finished = (await listAuditEvents(table, 'rec-skip', 100)).items.find((a) => a.action === 'webhook.recovery_finished');
    expect(finished?.detail).toMatchObject({ jobId: job.jobId, status: 'failed', reason: 'endpoint_disabled' });
  });
});
