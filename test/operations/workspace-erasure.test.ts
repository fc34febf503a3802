/**
 * Erasing a workspace in the real local stack: two workspaces seeded with every kind of item
 * through the API, the pipeline and the store (endpoints with a rotated secret in its grace,
 * deliveries with attempts, replays and their links, a recovery job with its markers, audit,
 * notifications acknowledged or not, tokens, members, idempotency records, health counters,
 * subscriptions, rate-limit windows, event index entries); one is erased by the job on the
 * stack's in-process jobs queue, and a scan of the table finds nothing of it and every item of
 * the other (and of the stack's own workspace) as it was. Access ends when the start answers,
 * the slug stays taken until the job ends, a queued message of an erased delivery is dropped.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { defaultRuntime } from '#lambdas/composition/runtime';
import { ErasureJobSchema } from '../../lambdas/contract/erasure-schemas';
import { hashApiToken } from '../../lambdas/domain/api-tokens';
import { ensureWorkspace, issueToken, seedMember } from '../../lambdas/operations/admin';
import { resolveCaller } from '../../lambdas/operations/access';
import { getErasureJob, startWorkspaceErasure } from '../../lambdas/operations/workspace-erasure';
import { findTokenByHash } from '../../lambdas/store/api-tokens';
import type { TableContext } from '../../lambdas/store/client';
import { putNotification } from '../../lambdas/store/notifications';
import { createWorkspace } from '../../lambdas/store/workspaces';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { scriptedReceiver } from '../helpers/scripted-receiver';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((s) => s()));
});

const EVENTUALLY = { timeout: 30_000, interval: 50 };
const PLATFORM_PRINCIPAL = 'arn:aws:iam::123456789012:role/platform-backend';
const TERMINAL = ['delivered', 'failed_permanent', 'dead_lettered'];

type Item = Record<string, unknown>;

/** Every item of the table. */
async function scanAll(table: TableContext): Promise<Item[]> {
  const items: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await table.doc.send(new ScanCommand({ TableName: table.tableName, ConsistentRead: true, ExclusiveStartKey: start }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

const keyOf = (i: Item) => `${String(i.pk)} ${String(i.sk)}`;
const byKey = (items: Item[]) => [...items].sort((a, b) => keyOf(a).localeCompare(keyOf(b)));

/**
 * The items of a workspace: those naming its slug, or any id found in them (its endpoints,
 * tokens, deliveries, jobs), taken to a fixed point, so a token's idempotency records, an
 * endpoint's health counters or a job's markers count as the workspace's too.
 */
function itemsOf(items: Item[], slug: string): { items: Item[]; needles: Set<string> } {
  const needles = new Set([slug]);
  const text = items.map((i) => JSON.stringify(i));
  const mine = new Set<number>();
  for (let grown = true; grown;) {
    grown = false;
    text.forEach((t, i) => {
      if (mine.has(i) || ![...needles].some((n) => t.includes(n))) return;
      mine.add(i);
      grown = true;
      for (const id of t.match(/\b(?:whe|tok|whd|whj|ntf|mem)_[0-9A-HJKMNP-TV-Z]{26}\b/g) ?? []) needles.add(id);
    });
  }
  return { items: items.filter((_, i) => mine.has(i)), needles };
}

/** Seeds a workspace with every kind of item the service writes, through the API, the pipeline and the store. */
async function seedWorkspace(api: TestApi, slug: string, urls: { ok: string; failing: string }) {
  await ensureWorkspace(api.table, slug, `Workspace ${slug}`);
  const { token } = await issueToken(api.table, slug, { name: 'admin', scopes: ['admin'] });
  await seedMember(api.table, slug, `owner@${slug}.example.com`, 'owner');
  const call = (method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}) =>
    api.call(method, `/workspaces/${slug}${path}`, { token, ...options });

  const ok = await call('POST', '/webhooks', { body: { url: urls.ok, eventTypes: ['order.shipped', 'webhook.test_event'] } });
  const failing = await call('POST', '/webhooks', { body: { url: urls.failing, eventTypes: ['order.shipped'] } });
  expect([ok.status, failing.status]).toEqual([201, 201]);
  const okId = ok.body.endpointId as string;
  const failingId = failing.body.endpointId as string;
  // A rotated secret: the replaced one in its grace window (a grace entry in gsi1).
  expect((await call('POST', `/webhooks/${okId}/rotate-secret`)).status).toBe(200);

  const since = new Date(Date.now() - 1000).toISOString();
  for (const orderId of ['o-1', 'o-2', 'o-3']) {
    const res = await fetch(`${api.apiUrl}/local/events`, {
      method: 'POST',
      body: JSON.stringify({ workspace: slug, type: 'order.shipped', payload: { orderId } }),
    });
    expect(res.status).toBe(202);
  }
  const settled = async () =>
    vi.waitFor(async () => {
      const list = await call('GET', '/deliveries?limit=100');
      expect(list.status).toBe(200);
      const items = list.body.items as { deliveryId: string; endpointId: string; status: string }[];
      expect(items.length).toBeGreaterThan(0);
      expect(items.filter((d) => !TERMINAL.includes(d.status))).toEqual([]);
      return items;
    }, EVENTUALLY);
  const first = await settled();
  const failed = first.filter((d) => d.endpointId === failingId && d.status === 'failed_permanent');
  expect(failed).toHaveLength(3);

  // A test send under an idempotency key (the record), a replay (its link and the source's marker).
  expect((await call('POST', `/webhooks/${okId}/test-event`, { headers: { 'idempotency-key': `seed-${slug}` } })).status).toBe(202);
  expect((await call('POST', `/webhooks/deliveries/${failed[0]!.deliveryId}/replay`)).status).toBe(202);
  // A recovery job: its entry, its markers, the workspace's slots item.
  const recover = await call('POST', `/webhooks/${failingId}/recover`, { body: { since } });
  expect(recover.status).toBe(202);
  await vi.waitFor(async () => {
    expect((await call('GET', `/jobs/${recover.body.jobId as string}`)).body.status).toBe('completed');
  }, EVENTUALLY);
  // A second token, through the API; notifications, one of them acknowledged.
  expect((await call('POST', '/api-tokens', { body: { name: 'ci', scopes: ['read'] } })).status).toBe(201);
  const now = new Date();
  const notes = await Promise.all(
    ['first', 'second'].map((message) =>
      putNotification(api.table, slug, { kind: 'endpoint_disabled', message, endpointId: failingId }, now),
    ),
  );
  expect((await call('POST', `/notifications/${notes[0]!.notificationId}/ack`)).status).toBe(200);
  await settled();
  await vi.waitFor(() => {
    expect([api.queues.deliveries.depth, api.queues.slowDeliveries.depth, api.queues.jobs.depth]).toEqual([0, 0, 0]);
  }, EVENTUALLY);
  return { token, okId, failingId };
}

describe('erasing a workspace (local stack)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ timeScale: 1000, schedules: false, onPipelineError: () => undefined });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('erases every item of the workspace and nothing of any other; access ends at the start; the slug is free only at the end', async () => {
    const okReceiver = await scriptedReceiver((_req, res) => res.writeHead(200).end('ok'));
    // The first try 500 (retried: an attempt item), then 400 (failed for good).
    const failingReceiver = await scriptedReceiver((req, res) => {
      const tries = failingReceiver.seen.filter((r) => r.headers['webhook-id'] === req.headers['webhook-id']).length;
      res.writeHead(tries <= 1 ? 500 : 400).end('no');
    });
    stops.push(
      () => okReceiver.stop(),
      () => failingReceiver.stop(),
    );
    const urls = { ok: okReceiver.url, failing: failingReceiver.url };
    const erased = await seedWorkspace(api, 'erase-me', urls);
    await seedWorkspace(api, 'keep-me', urls);
    await api.outboxCaughtUp();

    const before = await scanAll(api.table);
    const mine = itemsOf(before, 'erase-me');
    const types = new Set(
      mine.items.map((i) => (typeof i.type === 'string' ? i.type : String(i.pk).startsWith('RL#') ? 'rate-limit' : 'none')),
    );
    // Every kind of item the service writes for a workspace is there to erase.
    for (const type of [
      'workspace',
      'workspace-counts',
      'member',
      'token',
      'token-hash',
      'endpoint',
      'secret_grace',
      'subscription',
      'delivery',
      'delivery-state',
      'attempt',
      'delivery-replay',
      'delivery-replayed',
      'audit',
      'notification',
      'job',
      'job-entry',
      'recovery-marker',
      'recovery-slots',
      'idempotency',
      'endpoint-health',
      'workspace-health',
      'rate-limit',
    ])
      expect(types, `seeded ${type}`).toContain(type);
    expect(mine.items.some((i) => typeof i.evtpk === 'string' && typeof i.logpk === 'string' && typeof i.gsi2pk === 'string')).toBe(true);
    expect(mine.items.some((i) => i.type === 'notification' && typeof i.acknowledgedAt === 'string')).toBe(true);
    const others = byKey(before.filter((i) => !mine.items.includes(i)));
    expect(others.some((i) => JSON.stringify(i).includes('keep-me'))).toBe(true);

    const { deps } = defaultRuntime();
    const started = await startWorkspaceErasure(deps, 'erase-me', PLATFORM_PRINCIPAL);
    expect(started).toMatchObject({ kind: 'erase', workspace: 'erase-me', status: 'running', finishedAt: null });
    // The wire form is what the contract's schema says (the platform API answers it as is).
    expect(ErasureJobSchema.parse(started)).toEqual(started);
    // From the moment the start answers, no token of the workspace resolves.
    expect(await findTokenByHash(api.table, hashApiToken(erased.token))).toBeNull();
    expect(await resolveCaller(api.table, `Bearer ${erased.token}`)).toBeNull();
    expect((await api.call('GET', '/workspaces/erase-me/webhooks', { token: erased.token })).status).toBe(401);
    // Starting again gives the same job; the slug stays taken while it runs.
    expect((await startWorkspaceErasure(deps, 'erase-me', PLATFORM_PRINCIPAL)).jobId).toBe(started.jobId);
    expect(await createWorkspace(api.table, { slug: 'erase-me', name: 'again' }, new Date())).toBe(false);

    const done = await vi.waitFor(async () => {
      const job = await getErasureJob(deps, started.jobId);
      expect(job?.status).toBe('completed');
      return job!;
    }, EVENTUALLY);
    expect(done.finishedAt).not.toBeNull();
    expect(ErasureJobSchema.parse(done)).toEqual(done);
    expect(done.erased).toMatchObject({ endpoints: 2, secrets: 3, tokens: 2, members: 1, subscriptions: 3, jobs: 1, notifications: 2 });
    // The report counts what was there: every delivery and attempt seeded.
    expect(done.erased.deliveries).toBe(mine.items.filter((i) => i.type === 'delivery').length);
    expect(done.erased.attempts).toBe(mine.items.filter((i) => i.type === 'attempt').length);
    expect(done.erased.audit).toBe(mine.items.filter((i) => i.type === 'audit').length);

    const after = await scanAll(api.table);
    const platform = after.filter((i) => i.pk === 'PLATFORM');
    const rest = after.filter((i) => i.pk !== 'PLATFORM');
    // Nothing of the erased workspace is left, in any key, index key or attribute.
    for (const item of rest) {
      const text = JSON.stringify(item);
      const named = [...mine.needles].filter((n) => text.includes(n));
      expect(named, `${keyOf(item)} names the erased workspace`).toEqual([]);
    }
    // Every item of the other workspaces is as it was.
    expect(byKey(rest)).toEqual(others);
    // The erasure's record, outside the workspace: the job, and the platform's audit entries.
    expect(platform.map((i) => i.type).sort()).toEqual(['erasure-job', 'platform-audit', 'platform-audit']);
    expect(platform.find((i) => i.action === 'workspace.erased')).toMatchObject({
      requestedBy: PLATFORM_PRINCIPAL,
      workspace: 'erase-me',
      jobId: started.jobId,
      detail: { erased: done.erased, startedAt: started.createdAt },
    });

    // The slug is free again.
    expect(await createWorkspace(api.table, { slug: 'erase-me', name: 'again' }, new Date())).toBe(true);
    // A workspace that does not exist cannot be erased.
    await expect(startWorkspaceErasure(deps, 'never-was', PLATFORM_PRINCIPAL)).rejects.toMatchObject({ tag: 'WorkspaceNotFound' });
  }, 120_000);

  it('drops a message already in the delivery queue whose delivery was erased', async () => {
    const r = await scriptedReceiver((_req, res) => res.writeHead(200).end('ok'));
    stops.push(() => r.stop());
    await ensureWorkspace(api.table, 'queued-gone', 'Queued');
    const { token } = await issueToken(api.table, 'queued-gone', { name: 'admin', scopes: ['admin'] });
    const ep = await api.call('POST', '/workspaces/queued-gone/webhooks', { token, body: { url: r.url, eventTypes: ['order.shipped'] } });
    expect(ep.status).toBe(201);
    // A delivery made and sent; once the workspace is erased, its message comes again (as a redelivery would).
    const held = await api.call('POST', `/workspaces/queued-gone/webhooks/${ep.body.endpointId as string}/test-event`, { token });
    expect(held.status).toBe(202);
    const deliveryId = held.body.deliveryId as string;
    await vi.waitFor(() => expect(r.seen).toHaveLength(1), EVENTUALLY);
    const { deps } = defaultRuntime();
    const job = await startWorkspaceErasure(deps, 'queued-gone', PLATFORM_PRINCIPAL);
    await vi.waitFor(async () => expect((await getErasureJob(deps, job.jobId))?.status).toBe('completed'), EVENTUALLY);

    await api.queues.deliveries.send([{ deliveryId }]);
    await vi.waitFor(() => expect(api.queues.deliveries.depth).toBe(0), EVENTUALLY);
    expect(api.queues.deadLetters.depth).toBe(0);
    expect(r.seen).toHaveLength(1);
    const left = (await scanAll(api.table)).filter((i) => i.pk !== 'PLATFORM' && JSON.stringify(i).includes(deliveryId));
    expect(left).toEqual([]);
  });
});
