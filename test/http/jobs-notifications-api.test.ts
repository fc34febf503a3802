/**
 * The workspace's job list, acknowledging notifications and the audit actor, through REST and the
 * official MCP client against the real local stack: jobs of two workspaces listed newest first,
 * filtered by status and paged by cursor; a notification acknowledged once (a repeat answers the
 * first time), filtered by `acknowledged`; audit entries naming the token that made them, still
 * after it is revoked.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ensureWorkspace, issueToken } from '../../lambdas/operations/admin';
import { newRecoveryJob, recoveryWindow } from '../../lambdas/domain/recovery';
import { putNotification } from '../../lambdas/store/notifications';
import { createRecoveryJob } from '../../lambdas/store/recovery-jobs';
import { startTestApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
let other: { slug: string; token: string };
const clients: Client[] = [];
const ws = () => `/workspaces/${api.workspace}`;

beforeAll(async () => {
  api = await startTestApi({ timeScale: 1000, schedules: false, onPipelineError: () => undefined });
  await ensureWorkspace(api.table, 'other-ws', 'Other');
  other = { slug: 'other-ws', token: (await issueToken(api.table, 'other-ws', { name: 'other admin', scopes: ['admin'] })).token };
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await api?.close();
});

async function mcp(token = api.token): Promise<Client> {
  const c = new Client({ name: 'test', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(api.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  clients.push(c);
  return c;
}

type ToolResult = { isError?: boolean; structuredContent?: any };
const tool = async (c: Client, name: string, args: Record<string, unknown>) => (await c.callTool({ name, arguments: args })) as ToolResult;

async function endpoint(slug: string, token: string): Promise<string> {
  const created = await api.call('POST', `/workspaces/${slug}/webhooks`, {
    token,
    body: { url: 'https://hooks.example.com/jobs', eventTypes: ['webhook.test_event'] },
  });
  expect(created.status, created.text).toBe(201);
  return created.body.endpointId as string;
}

/** A recovery started through REST (nothing to replay, so its worker completes it at once). */
async function completedJob(slug: string, token: string): Promise<string> {
  const endpointId = await endpoint(slug, token);
  const started = await api.call('POST', `/workspaces/${slug}/webhooks/${endpointId}/recover`, {
    token,
    body: { since: new Date(Date.now() - 60_000).toISOString() },
  });
  expect(started.status, started.text).toBe(202);
  const jobId = started.body.jobId as string;
  await vi.waitFor(
    async () => expect((await api.call('GET', `/workspaces/${slug}/jobs/${jobId}`, { token })).body.status).toBe('completed'),
    {
      timeout: 10_000,
      interval: 25,
    },
  );
  return jobId;
}

/** A running recovery, stored as the recover operation stores it but with no worker message, so it stays running. */
async function runningJob(): Promise<string> {
  const endpointId = await endpoint(api.workspace, api.token);
  const now = new Date();
  const window = recoveryWindow({ since: new Date(now.getTime() - 60_000).toISOString() }, now);
  const job = newRecoveryJob(
    {
      workspace: api.workspace,
      endpointId,
      actor: { kind: 'token', id: 'tok_01JD2YA1B2C3D4E5F6G7H8J9KM' },
      count: { matched: 0, matchedAtLeast: false, skippedReplayed: 0 },
      window,
    },
    now,
  );
  expect(await createRecoveryJob(api.table, job, now, 3)).toBe('created');
  return job.jobId;
}

const idsOf = (page: { items: { jobId: string }[] }) => page.items.map((j) => j.jobId);

describe('GET /workspaces/{slug}/jobs', () => {
  it('lists the workspace’s jobs newest first, filters by status, pages by cursor, and never shows another workspace’s', async () => {
    const completed = await completedJob(api.workspace, api.token);
    const othersJob = await completedJob(other.slug, other.token);
    const cancelled = await runningJob();
    expect((await api.call('POST', `${ws()}/jobs/${cancelled}/cancel`)).body.status).toBe('cancelled');
    const running = await runningJob();

    const all = await api.call('GET', `${ws()}/jobs`);
    expect(all.status, all.text).toBe(200);
    expect(idsOf(all.body)).toEqual([running, cancelled, completed]);
    expect(all.body.nextCursor).toBeNull();
    expect(all.body.items.map((j: { status: string }) => j.status)).toEqual(['running', 'cancelled', 'completed']);
    // Each item is the job as GET …/jobs/{jobId} answers it.
    expect(all.body.items[2]).toEqual((await api.call('GET', `${ws()}/jobs/${completed}`)).body);
    expect(idsOf((await api.call('GET', `/workspaces/${other.slug}/jobs`, { token: other.token })).body)).toEqual([othersJob]);

    expect(idsOf((await api.call('GET', `${ws()}/jobs?status=running`)).body)).toEqual([running]);
    expect(idsOf((await api.call('GET', `${ws()}/jobs?status=completed,cancelled`)).body)).toEqual([cancelled, completed]);
    expect(idsOf((await api.call('GET', `${ws()}/jobs?status=failed`)).body)).toEqual([]);

    // One at a time, unfiltered and filtered: every job once, in order, the last page says null.
    for (const [query, expected] of [
      ['', [running, cancelled, completed]],
      ['&status=cancelled,completed', [cancelled, completed]],
    ] as const) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { body: { items: { jobId: string }[]; nextCursor: string | null } } = await api.call(
          'GET',
          `${ws()}/jobs?limit=1${query}${cursor ? `&cursor=${cursor}` : ''}`,
        );
        seen.push(...idsOf(page.body));
        cursor = page.body.nextCursor;
      } while (cursor);
      expect(seen).toEqual(expected);
    }
    // A cursor is tied to its filter: under another filter it addresses nothing.
    const first = await api.call('GET', `${ws()}/jobs?limit=1`);
    expect((await api.call('GET', `${ws()}/jobs?status=completed&cursor=${first.body.nextCursor}`)).body).toEqual({
      items: [],
      nextCursor: null,
    });

    const bad = await api.call('GET', `${ws()}/jobs?status=running,paused`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ tag: 'ValidationError', issues: [{ path: 'query.status' }] });
    // A read token may list them.
    const { token: reader } = await issueToken(api.table, api.workspace, { name: 'reader', scopes: ['read'] });
    expect(idsOf((await api.call('GET', `${ws()}/jobs`, { token: reader })).body)).toEqual([running, cancelled, completed]);

    // The MCP tool answers the same.
    const client = await mcp();
    const listed = await tool(client, 'list_jobs', { slug: api.workspace, status: 'running,completed' });
    expect(listed.isError ?? false).toBe(false);
    expect(idsOf(listed.structuredContent)).toEqual([running, completed]);
  });
});

describe('acknowledging notifications', () => {
  it('sets acknowledgedAt once, filters by acknowledged, and refuses others’ and malformed ids', async () => {
    const t0 = new Date(Date.now() - 60_000);
    const older = await putNotification(api.table, api.workspace, { kind: 'endpoint.disabled', message: 'older' }, t0);
    const newer = await putNotification(
      api.table,
      api.workspace,
      { kind: 'endpoint.disabled', message: 'newer' },
      new Date(t0.getTime() + 1000),
    );
    const foreign = await putNotification(api.table, other.slug, { kind: 'endpoint.disabled', message: 'not yours' }, t0);

    const listed = await api.call('GET', `${ws()}/notifications`);
    expect(listed.body.items).toEqual([
      expect.objectContaining({ notificationId: newer.notificationId, acknowledgedAt: null }),
      expect.objectContaining({ notificationId: older.notificationId, acknowledgedAt: null }),
    ]);

    const { token: writer, tokenId: writerId } = await issueToken(api.table, api.workspace, { name: 'on-call', scopes: ['write'] });
    const acked = await api.call('POST', `${ws()}/notifications/${older.notificationId}/ack`, { token: writer });
    expect(acked.status, acked.text).toBe(200);
    expect(acked.body).toEqual({ ...older, acknowledgedAt: expect.any(String) });
    const firstTime = acked.body.acknowledgedAt as string;
    expect(Date.parse(firstTime)).toBeGreaterThanOrEqual(Date.parse(older.createdAt));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const again = await api.call('POST', `${ws()}/notifications/${older.notificationId}/ack`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(acked.body);

    const ids = (page: { items: { notificationId: string }[] }) => page.items.map((n) => n.notificationId);
    expect(ids((await api.call('GET', `${ws()}/notifications?acknowledged=true`)).body)).toEqual([older.notificationId]);
    expect(ids((await api.call('GET', `${ws()}/notifications?acknowledged=false`)).body)).toEqual([newer.notificationId]);
    expect((await api.call('GET', `${ws()}/notifications`)).body.items).toEqual([
      expect.objectContaining({ notificationId: newer.notificationId, acknowledgedAt: null }),
      expect.objectContaining({ notificationId: older.notificationId, acknowledgedAt: firstTime }),
    ]);
    expect((await api.call('GET', `${ws()}/notifications?acknowledged=yes`)).status).toBe(400);

    // Another workspace's notification is as absent as an unknown one; a malformed id is 400.
    for (const id of [foreign.notificationId, 'ntf_01JD2YD5E6F7G8H9J0K1M2N3PQ']) {
      const missing = await api.call('POST', `${ws()}/notifications/${id}/ack`);
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ tag: 'NotificationNotFound' });
    }
    expect((await api.call('POST', `${ws()}/notifications/nope/ack`)).body).toMatchObject({ status: 400, tag: 'ValidationError' });
    expect(
      (await api.call('GET', `/workspaces/${other.slug}/notifications?acknowledged=false`, { token: other.token })).body.items,
    ).toEqual([expect.objectContaining({ notificationId: foreign.notificationId, acknowledgedAt: null })]);

    // `notification:ack` is in the write bundle, not in read.
    const { token: reader } = await issueToken(api.table, api.workspace, { name: 'reader', scopes: ['read'] });
    const refused = await api.call('POST', `${ws()}/notifications/${newer.notificationId}/ack`, { token: reader });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ tag: 'Forbidden', requiredPermission: 'notification:ack' });

    // One audit entry, however many acknowledgements, naming the token.
    const audit = (await api.call('GET', `${ws()}/audit-events?limit=50`)).body.items.filter(
      (a: { action: string }) => a.action === 'notification.acknowledged',
    );
    expect(audit).toEqual([
      expect.objectContaining({
        targetId: older.notificationId,
        actor: { kind: 'token', id: writerId, name: 'on-call' },
        actorId: writerId,
      }),
    ]);

    // The MCP tool acknowledges too.
    const client = await mcp();
    const viaMcp = await tool(client, 'ack_notification', { slug: api.workspace, notificationId: newer.notificationId });
    expect(viaMcp.isError ?? false).toBe(false);
    expect(viaMcp.structuredContent).toMatchObject({ notificationId: newer.notificationId, acknowledgedAt: expect.any(String) });
    expect((await api.call('GET', `${ws()}/notifications?acknowledged=false`)).body.items).toEqual([]);
    const unknown = await tool(client, 'ack_notification', { slug: api.workspace, notificationId: foreign.notificationId });
    expect(unknown.isError).toBe(true);
    expect(unknown.structuredContent).toMatchObject({ status: 404, tag: 'NotificationNotFound' });
  });
});

describe('the audit actor', () => {
  it('names the token that made a change, still after the token is revoked; the service’s own entries are kind system', async () => {
    const created = await api.call('POST', `${ws()}/api-tokens`, { body: { name: 'CI deploy bot', scopes: ['write'] } });
    expect(created.status).toBe(201);
    const bot = created.body as { token: string; tokenId: string };
    const made = await api.call('POST', `${ws()}/webhooks`, {
      token: bot.token,
      body: { url: 'https://hooks.example.com/bot', eventTypes: ['webhook.test_event'] },
    });
    expect(made.status).toBe(201);
    // Through MCP as well (the gate resolves the token as the authorizer does).
    const client = await mcp(bot.token);
    expect(
      (await tool(client, 'update_webhook', { slug: api.workspace, endpointId: made.body.endpointId, description: 'by mcp' })).isError ??
        false,
    ).toBe(false);
    expect((await api.call('DELETE', `${ws()}/api-tokens/${bot.tokenId}`)).status).toBe(204);

    const events = (await api.call('GET', `${ws()}/audit-events?limit=100`)).body.items as {
      action: string;
      targetId: string;
      actor: unknown;
      actorId: string;
    }[];
    const botActor = { kind: 'token', id: bot.tokenId, name: 'CI deploy bot' };
    expect(events.filter((e) => e.targetId === made.body.endpointId)).toEqual([
      expect.objectContaining({ action: 'webhook.updated', actor: botActor, actorId: bot.tokenId }),
      expect.objectContaining({ action: 'webhook.created', actor: botActor, actorId: bot.tokenId }),
    ]);
    // The seeded admin token was issued by the service itself; its name is on the entries it makes.
    const seeded = events.find((e) => e.action === 'api_token.created' && e.targetId !== bot.tokenId && e.actorId === 'system');
    expect(seeded?.actor).toEqual({ kind: 'system', id: 'system' });
    const revoked = events.find((e) => e.action === 'api_token.revoked' && e.targetId === bot.tokenId);
    expect(revoked?.actor).toEqual({ kind: 'token', id: expect.stringMatching(/^tok_/), name: 'local admin' });
  });
});
