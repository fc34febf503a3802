/**
 * Recovery without amplification and with bounded work, on DynamoDB Local with an injected clock:
 * replays are left out unless `includeReplayed`, the dry-run count stops at its cap and says so,
 * a workspace runs at most `recoveryJobsPerWorkspace` jobs (a dead job's slot frees itself), a
 * replay racing a disable or delete of its endpoint is refused in its own transaction, the
 * pending repair never re-queues a deleted endpoint's rows, and a deleted endpoint's purge job
 * deletes its history in bounded slices.
 */
import { GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../lambdas/contract/errors';
import { RECOVERY_COUNT_CAP } from '../../lambdas/contract/jobs';
import type { DeliveryStatus } from '../../lambdas/contract/schemas';
import { newHeldDelivery, newPendingDelivery, type DeliveryRecord } from '../../lambdas/domain/delivery-lifecycle';
import { RECOVERY_SLOT_LEASE_MS } from '../../lambdas/domain/recovery';
import type { Caller, OperationDeps } from '../../lambdas/operations/context';
import { cancelJob, recoverWebhookDeliveries } from '../../lambdas/operations/recovery';
import { PURGE_DELIVERIES_PER_SLICE, runRecoverySlice, type RecoveryWorkerDeps } from '../../lambdas/pipeline/recovery-worker';
import { runPendingRepair } from '../../lambdas/pipeline/schedules';
import type { JobMessage, JobQueue } from '../../lambdas/queue/job-queue';
import type { TableContext } from '../../lambdas/store/client';
import { getDeliveryItems, putPendingDelivery, summaryItem } from '../../lambdas/store/deliveries';
import { listAuditEvents } from '../../lambdas/store/audit';
import { deleteEndpoint, updateEndpoint } from '../../lambdas/store/endpoints';
import { batchWriteAll } from '../../lambdas/store/table-io';
import { endpointDeliveryPartitions, keys } from '../../lambdas/store/table-schema';
import { capturingQueue, seedEndpoint, testCatalogue, testSealer } from '../helpers/pipeline';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

function fakeClock(start = Math.floor(Date.now() / 60_000) * 60_000 - 3600_000) {
  let t = start;
  return { now: () => new Date(t), sleep: async (ms: number) => void (t += ms), advance: (ms: number) => void (t += ms) };
}

function capturingJobQueue(): JobQueue & { sent: { message: JobMessage; delaySeconds: number }[] } {
  const sent: { message: JobMessage; delaySeconds: number }[] = [];
  return { sent, send: async (message, delaySeconds = 0) => void sent.push({ message, delaySeconds }) };
}

const caller = (workspace: string): Caller => ({ workspace, tokenId: 'tok_test', scopes: ['admin'] });

function setup(rate: number, options: { table?: TableContext; jobsPerWorkspace?: number } = {}) {
  const t = options.table ?? table;
  const clock = fakeClock();
  const jobQueue = capturingJobQueue();
  const queue = capturingQueue();
  const worker: RecoveryWorkerDeps = { table: t, queue, jobQueue, now: clock.now, sleep: clock.sleep, ratePerSecond: rate };
  const deps: OperationDeps & { recoveryJobsPerWorkspace?: number } = {
    table: t,
    now: clock.now,
    eventTypes: testCatalogue,
    urlPolicy: {},
    queue: capturingQueue(),
    jobQueue,
    secretSealer: testSealer,
    ...(options.jobsPerWorkspace === undefined ? {} : { recoveryJobsPerWorkspace: options.jobsPerWorkspace }),
  };
  return { clock, jobQueue, queue, worker, deps };
}

/** Deliveries of an endpoint with the given statuses (and `replayedFrom`, when given), written straight to the table. */
async function seed(
  endpoint: { workspace: string; endpointId: string },
  statuses: readonly DeliveryStatus[],
  at: Date,
  replayedFrom: string | null = null,
): Promise<DeliveryRecord[]> {
  const records = statuses.map((status, i) => ({
    ...newHeldDelivery(
      { workspace: endpoint.workspace, endpointId: endpoint.endpointId, eventType: 'order.shipped', payload: { i }, replayedFrom },
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

async function drain(worker: RecoveryWorkerDeps, jobQueue: ReturnType<typeof capturingJobQueue>, maxSlices = 200) {
  const outcomes = [];
  for (let i = 0; i < maxSlices && jobQueue.sent.length > 0; i++)
    outcomes.push(await runRecoverySlice(worker, jobQueue.sent.shift()!.message.jobId));
  expect(jobQueue.sent, 'every slice ran').toHaveLength(0);
  return outcomes;
}

const recoverInput = (slug: string, endpointId: string, body: Record<string, unknown>) => ({
  params: { slug, endpointId },
  query: undefined,
  body: body as { since: string; dryRun?: boolean; includeReplayed?: boolean },
});

describe('no amplification', () => {
  it('leaves out sources that already have a replay unless includeReplayed; a failed replay heads its chain, so no delivery is replayed twice', async () => {
    const { clock, jobQueue, worker, deps } = setup(50);
    const ep = await seedEndpoint(table, { workspace: 'amp', url: 'https://a.example.com' }, clock.now());
    const at = new Date(clock.now().getTime() - 60_000);
    await seed(ep, ['failed_permanent', 'failed_permanent', 'dead_lettered'], at);
    // A delivery that is a replay (replayedFrom set) but has no replay of its own is a candidate like any other.
    await seed(ep, ['dead_lettered'], at, 'whd_01JD2Y9P0R6S8T1V3W5X7Y9ZAB');
    const since = new Date(at.getTime() - 1000).toISOString();
    const dry = (body: { includeReplayed?: boolean } = {}) =>
      recoverWebhookDeliveries(deps, caller('amp'), recoverInput('amp', ep.endpointId, { since, dryRun: true, ...body }));
    expect(await dry()).toEqual({ matched: 4, matchedAtLeast: false, skippedReplayed: 0 });

    // A job replays the four; its replays all fail.
    const job = await recoverWebhookDeliveries(deps, caller('amp'), recoverInput('amp', ep.endpointId, { since }));
    expect(job).toMatchObject({ matched: 4, skippedReplayed: 0, includeReplayed: false });
    expect((await drain(worker, jobQueue)).at(-1)).toMatchObject({ kind: 'finished', status: 'completed' });
    const replayIds = (await listAuditEvents(table, 'amp', 100)).items
      .filter((a) => a.action === 'webhook.delivery_replayed')
      .map((a) => a.targetId);
    expect(replayIds).toHaveLength(4);
    await batchWriteAll(
      table,
      replayIds.map((id) => ({
        PutRequest: {
          Item: {
            ...keys.deliveryState(id),
            type: 'delivery-state',
            deliveryId: id,
            status: 'failed_permanent',
            attempts: 1,
            evidenceCount: 1,
            updatedAt: clock.now().toISOString(),
          },
        },
      })),
    );
    clock.advance(1000);
    // The four sources have a replay now: only the four failed replays, the heads of their chains, match.
    expect(await dry()).toEqual({ matched: 4, matchedAtLeast: false, skippedReplayed: 4 });
    expect(await dry({ includeReplayed: true })).toEqual({ matched: 8, matchedAtLeast: false, skippedReplayed: 0 });
    const next = await recoverWebhookDeliveries(deps, caller('amp'), recoverInput('amp', ep.endpointId, { since }));
    expect(next).toMatchObject({ matched: 4, skippedReplayed: 4 });
    expect((await drain(worker, jobQueue)).at(-1)).toMatchObject({ kind: 'finished', status: 'completed' });
    const replayed = (await listAuditEvents(table, 'amp', 100)).items
      .filter((a) => a.action === 'webhook.delivery_replayed')
      .map((a) => (a.detail as { replayedFrom: string }).replayedFrom);
    // Eight replays in all, each of a different delivery: the second job replayed the first job's replays only.
    expect(replayed).toHaveLength(8);
    expect(new Set(replayed).size).toBe(8);
    expect(replayed.filter((from) => replayIds.includes(from))).toHaveLength(4);
    // The second job's replays are settled, so no later test's repair pass finds them pending.
    const second = (await listAuditEvents(table, 'amp', 100)).items
      .filter((a) => a.action === 'webhook.delivery_replayed' && !replayIds.includes(a.targetId))
      .map((a) => a.targetId);
    await batchWriteAll(
      table,
      second.map((id) => ({
        PutRequest: {
          Item: {
            ...keys.deliveryState(id),
            type: 'delivery-state',
            deliveryId: id,
            status: 'delivered',
            attempts: 1,
            evidenceCount: 1,
            updatedAt: clock.now().toISOString(),
          },
        },
      })),
    );
  }, 180_000);

  it('runs at most recoveryJobsPerWorkspace jobs in a workspace (409 Conflict above), freed when one ends or its lease runs out', async () => {
    const { clock, jobQueue, worker, deps } = setup(1, { jobsPerWorkspace: 2 });
    const at = new Date(clock.now().getTime() - 60_000);
    const since = new Date(at.getTime() - 1000).toISOString();
    const endpoints: { workspace: string; endpointId: string }[] = [];
    for (let i = 0; i < 4; i++) {
      const ep = await seedEndpoint(table, { workspace: 'slots', url: `https://s${i}.example.com` }, clock.now());
      await seed(ep, ['failed_permanent', 'failed_permanent', 'failed_permanent'], at);
      endpoints.push(ep);
    }
    const start = (i: number) =>
      recoverWebhookDeliveries(deps, caller('slots'), recoverInput('slots', endpoints[i]!.endpointId, { since }));
    const first = await start(0);
    await start(1);
    const refused = await start(2).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ tag: 'Conflict', status: 409 });

    // A cancel frees its slot.
    await cancelJob(deps, caller('slots'), {
      params: { slug: 'slots', jobId: (first as { jobId: string }).jobId },
      query: undefined,
      body: undefined,
    });
    const third = await start(2);
    expect(third).toMatchObject({ status: 'running' });

    // Jobs whose worker stopped renewing their slots (no slice for longer than the lease) hold them no more.
    clock.advance(RECOVERY_SLOT_LEASE_MS + 1000);
    const fourth = await start(3);
    expect(fourth).toMatchObject({ status: 'running' });
    // The job that lost its slot stops at its next slice instead of running beside the new one.
    const stale = jobQueue.sent.find((m) => m.message.jobId === (third as { jobId: string }).jobId)!;
    const outcome = await runRecoverySlice(worker, stale.message.jobId);
    expect(outcome).toMatchObject({ kind: 'finished', status: 'failed' });
  });
});

describe('bounded counting', () => {
  it('counts exactly up to the cap, then answers a lower bound with matchedAtLeast', async () => {
    const { clock, deps } = setup(20);
    const ep = await seedEndpoint(table, { workspace: 'cap', url: 'https://c.example.com' }, clock.now());
    const at = new Date(clock.now().getTime() - 60_000);
    await seed(
      ep,
      Array.from({ length: RECOVERY_COUNT_CAP + 500 }, () => 'failed_permanent' as const),
      at,
    );
    const since = new Date(at.getTime() - 1000).toISOString();
    const count = await recoverWebhookDeliveries(deps, caller('cap'), recoverInput('cap', ep.endpointId, { since, dryRun: true }));
    expect(count).toMatchObject({ matchedAtLeast: true, skippedReplayed: 0 });
    const matched = (count as { matched: number }).matched;
    expect(matched).toBeGreaterThanOrEqual(RECOVERY_COUNT_CAP);
    expect(matched).toBeLessThan(RECOVERY_COUNT_CAP + 500);

    const small = await seedEndpoint(table, { workspace: 'cap', url: 'https://d.example.com' }, clock.now());
    await seed(small, ['failed_permanent', 'dead_lettered'], at);
    expect(await recoverWebhookDeliveries(deps, caller('cap'), recoverInput('cap', small.endpointId, { since, dryRun: true }))).toEqual({
      matched: 2,
      matchedAtLeast: false,
      skippedReplayed: 0,
    });
  }, 180_000);
});

describe('a recovery racing its endpoint', () => {
  for (const change of ['disabled', 'deleted'] as const) {
    it(`stops replaying once the endpoint is ${change}: the replay's own transaction checks it`, async () => {
      const slug = `race-${change}`;
      // The endpoint changes just before the job's first replay transaction commits (after the slice's own check).
      let raced = false;
      const racing: TableContext = {
        tableName: table.tableName,
        doc: {
          send: async (command: unknown) => {
            if (!raced && command instanceof TransactWriteCommand && JSON.stringify(command.input).includes('webhook.delivery_replayed')) {
              raced = true;
              const audit = { action: 'webhook.updated', actor: 't', targetId: ep.endpointId } as const;
              if (change === 'disabled') await updateEndpoint(table, slug, ep.endpointId, { enabled: false }, new Date(), audit);
              else await deleteEndpoint(table, slug, ep.endpointId, new Date(), { ...audit, action: 'webhook.deleted' });
            }
            return table.doc.send(command as never);
          },
        } as unknown as TableContext['doc'],
      };
      const { clock, jobQueue, queue, worker, deps } = setup(20, { table: racing });
      const ep = await seedEndpoint(table, { workspace: slug, url: 'https://r.example.com' }, clock.now());
      const at = new Date(clock.now().getTime() - 60_000);
      await seed(ep, ['failed_permanent', 'failed_permanent', 'failed_permanent'], at);
      await recoverWebhookDeliveries(
        deps,
        caller(slug),
        recoverInput(slug, ep.endpointId, { since: new Date(at.getTime() - 1000).toISOString() }),
      );
      const outcomes = await drain(worker, jobQueue);
      expect(raced).toBe(true);
      expect(outcomes.at(-1)).toMatchObject({ kind: 'finished', status: 'failed', replayed: 0 });
      expect(queue.sent).toEqual([]);
      const audit = (await listAuditEvents(table, slug, 100)).items;
      expect(audit.filter((a) => a.action === 'webhook.delivery_replayed')).toEqual([]);
      expect(audit.find((a) => a.action === 'webhook.recovery_finished')?.detail).toMatchObject({
        status: 'failed',
        reason: change === 'disabled' ? 'endpoint_disabled' : 'endpoint_deleted',
      });
    });
  }
});

describe('a deleted endpoint', () => {
  it('has its pending rows deleted by the pending repair, never re-queued', async () => {
    const ep = await seedEndpoint(table, { workspace: 'orphan', url: 'https://o.example.com' }, new Date());
    const kept = await seedEndpoint(table, { workspace: 'orphan', url: 'https://k.example.com' }, new Date());
    const then = new Date(Date.now() - 10 * 60_000);
    const mk = (endpointId: string) =>
      newPendingDelivery({ workspace: 'orphan', endpointId, eventType: 'order.shipped', payload: {}, replayedFrom: 'whd_x' }, then);
    const orphan = mk(ep.endpointId);
    const live = mk(kept.endpointId);
    await putPendingDelivery(table, orphan, then);
    await putPendingDelivery(table, live, then);
    await deleteEndpoint(table, 'orphan', ep.endpointId, new Date(), { action: 'webhook.deleted', actor: 't', targetId: ep.endpointId });

    const queue = capturingQueue();
    const first = await runPendingRepair({ table, queue, now: () => new Date() });
    expect(queue.sent.map((m) => m.deliveryId)).toEqual([live.deliveryId]);
    expect(first).toMatchObject({ requeued: 1, purged: 1 });
    expect((await getDeliveryItems(table, [orphan.deliveryId])).size).toBe(0);
    const again = capturingQueue();
    await runPendingRepair({ table, queue: again, now: () => new Date() });
    expect(again.sent.map((m) => m.deliveryId)).not.toContain(orphan.deliveryId);
  });

  it('has its history deleted by its purge job in bounded slices, and another endpoint keeps its own', async () => {
    const { clock, jobQueue, worker } = setup(20);
    const ep = await seedEndpoint(table, { workspace: 'purge', url: 'https://p.example.com' }, clock.now());
    const other = await seedEndpoint(table, { workspace: 'purge', url: 'https://q.example.com' }, clock.now());
    const at = new Date(clock.now().getTime() - 60_000);
    const gone = await seed(
      ep,
      Array.from({ length: 300 }, () => 'failed_permanent' as const),
      at,
    );
    const kept = await seed(other, ['failed_permanent', 'dead_lettered'], at);
    // An attempt item of one of them (a delivery's partition holds its attempts).
    await batchWriteAll(table, [{ PutRequest: { Item: { ...keys.attempt(gone[0]!.deliveryId, 1), type: 'attempt', ordinal: 1 } } }]);

    const jobId = 'whj_01JD2YC5D6E7F8G9H0J1K2M3NP';
    expect(
      await deleteEndpoint(
        table,
        'purge',
        ep.endpointId,
        clock.now(),
        { action: 'webhook.deleted', actor: 't', targetId: ep.endpointId },
        { jobId },
      ),
    ).toBe(true);
    jobQueue.sent.push({ message: { jobId }, delaySeconds: 0 });

    const first = await runRecoverySlice(worker, jobId);
    expect(first).toMatchObject({ kind: 'continued' });
    const left = (
      await getDeliveryItems(
        table,
        gone.map((d) => d.deliveryId),
      )
    ).size;
    expect(left, 'one slice deletes a bounded batch').toBeGreaterThanOrEqual(300 - PURGE_DELIVERIES_PER_SLICE);
    expect(left).toBeLessThan(300);

    jobQueue.sent.shift();
    const outcomes = await drain(worker, jobQueue);
    expect(outcomes.at(-1)).toMatchObject({ kind: 'finished', status: 'completed' });
    expect(
      (
        await getDeliveryItems(
          table,
          gone.map((d) => d.deliveryId),
        )
      ).size,
    ).toBe(0);
    const attempt = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: keys.attempt(gone[0]!.deliveryId, 1) }));
    expect(attempt.Item).toBeUndefined();
    for (const p of endpointDeliveryPartitions(ep.endpointId)) {
      const out = await table.doc.send(
        new QueryCommand({
          TableName: table.tableName,
          IndexName: p.index.name,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': p.index.partitionKey },
          ExpressionAttributeValues: { ':pk': p.pk },
        }),
      );
      expect(out.Items).toEqual([]);
    }
    expect(
      (
        await getDeliveryItems(
          table,
          kept.map((d) => d.deliveryId),
        )
      ).size,
    ).toBe(2);
  }, 180_000);
});
