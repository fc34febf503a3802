/**
 * The MCP server through the official SDK client over real HTTP against the
 * local stack: every contract operation as a tool, the same permissions and
 * problem bodies as REST, 401 at the gate, mutations visible through REST.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKEN_OPERATIONS } from '../../lambdas/contract/operations';
import { issueToken } from '../../lambdas/operations/admin';
import { putNotification } from '../../lambdas/store/notifications';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { scriptedReceiver } from '../helpers/scripted-receiver';

let api: TestApi;
let client: Client;
const clients: Client[] = [];

async function connect(token: string): Promise<Client> {
  const c = new Client({ name: 'test', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(api.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  clients.push(c);
  return c;
}

beforeAll(async () => {
  api = await startTestApi({ timeScale: 1000, schedules: false, onPipelineError: () => undefined });
  client = await connect(api.token);
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await api?.close();
});

type ToolResult = { isError?: boolean; structuredContent?: any };
const call = async (name: string, args: Record<string, unknown>, c = client) => (await c.callTool({ name, arguments: args })) as ToolResult;

describe('tools', () => {
  it('lists one tool per contract operation, with hints, descriptions and input schemas from the contract', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOKEN_OPERATIONS.map((o) => o.mcpTool).sort());
    for (const op of TOKEN_OPERATIONS) {
      const tool = tools.find((t) => t.name === op.mcpTool)!;
      expect(tool.description).toContain(op.description.slice(0, 40));
      expect(tool.annotations?.readOnlyHint).toBe(op.readOnly);
      expect(tool.annotations?.destructiveHint ?? false).toBe('destructive' in op ? op.destructive : false);
      // The workspace-less tools (the workspaces a caller may open, the staff sessions) name none.
      const properties = Object.keys(tool.inputSchema.properties ?? {});
      if ('workspaceless' in op && op.workspaceless) expect(properties).not.toContain('slug');
      else expect(properties).toContain('slug');
      if (op.query) expect(Object.keys(tool.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(Object.keys(op.query.shape)));
    }
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['list_webhook_deliveries', 'list_webhook_delivery_attempts']));
  });

  it('calls every tool; mutations are visible through REST', async () => {
    const slug = api.workspace;
    const r = await scriptedReceiver((_q, res) => res.writeHead(200).end());
    try {
      const called = new Set<string>();
      const ok = async (name: string, args: Record<string, unknown>) => {
        const res = await call(name, { slug, ...args });
        expect([name, res.isError ?? false]).toEqual([name, false]);
        called.add(name);
        return res.structuredContent;
      };
      const created = await ok('create_webhook', { url: r.url, eventTypes: ['webhook.test_event'], description: 'via mcp' });
      const rest = await api.call('GET', `/workspaces/${slug}/webhooks/${created.endpointId}`);
      expect(rest.body).toMatchObject({ endpointId: created.endpointId, description: 'via mcp' });
      expect(JSON.stringify(created)).not.toMatch(/whsec_/);

      expect((await ok('list_webhooks', { limit: 10 })).items.map((e: { endpointId: string }) => e.endpointId)).toContain(
        created.endpointId,
      );
      expect(await ok('get_webhook', { endpointId: created.endpointId })).toMatchObject({ url: r.url });
      await ok('update_webhook', { endpointId: created.endpointId, description: 'patched' });
      expect((await api.call('GET', `/workspaces/${slug}/webhooks/${created.endpointId}`)).body.description).toBe('patched');
      expect((await ok('rotate_webhook_secret', { endpointId: created.endpointId })).secret).toMatch(/^whsec_/);
      const sent = await ok('send_webhook_test_event', { endpointId: created.endpointId });
      await expect
        .poll(async () => (await api.call('GET', `/workspaces/${slug}/webhooks/deliveries/${sent.deliveryId}`)).body.status, {
          timeout: 5_000,
          interval: 25,
        })
        .toBe('delivered');
      expect((await ok('list_webhook_deliveries', { endpointId: created.endpointId })).items[0].deliveryId).toBe(sent.deliveryId);
      expect(await ok('get_webhook_delivery', { deliveryId: sent.deliveryId })).toMatchObject({ status: 'delivered' });
      expect((await ok('list_webhook_delivery_attempts', { deliveryId: sent.deliveryId })).items[0]).toMatchObject({
        ordinal: 1,
        outcome: 'delivered',
      });
      const notReplayable = await call('replay_webhook_delivery', { slug, deliveryId: sent.deliveryId });
      expect(notReplayable.isError).toBe(true);
      expect(notReplayable.structuredContent).toMatchObject({ status: 409, tag: 'DeliveryNotReplayable' });
      called.add('replay_webhook_delivery');
      expect((await ok('list_event_types', {})).items.map((t: { name: string }) => t.name)).toContain('webhook.test_event');
      expect(await ok('get_workspace_overview', {})).toMatchObject({ workspace: { slug } });
      expect((await ok('list_members', {})).items).toHaveLength(1);
      const token = await ok('create_api_token', { name: 'from mcp', scopes: ['read'] });
      expect((await ok('list_api_tokens', {})).items.map((t: { tokenId: string }) => t.tokenId)).toContain(token.tokenId);
      await ok('revoke_api_token', { tokenId: token.tokenId });
      expect((await api.call('GET', `/workspaces/${slug}/webhooks`, { token: token.token })).status).toBe(401);
      expect((await ok('list_audit_events', { limit: 5 })).items.length).toBeGreaterThan(0);
      expect(await ok('list_notifications', {})).toEqual({ items: [], nextCursor: null });
      const logPage = await ok('list_deliveries', {
        status: 'delivered',
        eventType: 'webhook.*',
        endpointId: created.endpointId,
        limit: 5,
      });
      expect(logPage.items.map((d: { deliveryId: string }) => d.deliveryId)).toEqual([sent.deliveryId]);
      expect((await ok('list_deliveries', { cursor: 'not-a-cursor' })).items).toEqual([]);
      // The counters are added after the dispatcher's batch, so they may trail the delivered status briefly.
      await expect
        .poll(async () => await ok('get_webhook_health', { endpointId: created.endpointId, window: '7d' }), {
          timeout: 5_000,
          interval: 25,
        })
        .toMatchObject({
          endpointId: created.endpointId,
          window: '7d',
          attempts: 1,
          delivered: 1,
          successRate: 1,
          byResponseStatus: { '200': 1 },
        });
      expect((await ok('get_webhook', { endpointId: created.endpointId })).health).toMatchObject({
        successRate24h: 1,
        lastAttemptAt: expect.any(String),
      });
      expect(
        (await ok('list_webhooks', { limit: 200 })).items.find((e: { endpointId: string }) => e.endpointId === created.endpointId).health
          .successRate24h,
      ).toBe(1);
      expect((await ok('get_workspace_overview', {})).deliveries24h).toMatchObject({ delivered: 1 });
      const since = new Date(Date.now() - 3_600_000).toISOString();
      expect(await ok('recover_webhook_deliveries', { endpointId: created.endpointId, since, dryRun: true })).toEqual({
        matched: 0,
        matchedAtLeast: false,
        skippedReplayed: 0,
      });
      const job = await ok('recover_webhook_deliveries', { endpointId: created.endpointId, since, statuses: ['failed', 'dead_lettered'] });
      expect(job).toMatchObject({
        kind: 'recover',
        endpointId: created.endpointId,
        status: 'running',
        matched: 0,
        statuses: ['failed', 'dead_lettered'],
      });
      expect(await ok('get_job', { jobId: job.jobId })).toMatchObject({ jobId: job.jobId, kind: 'recover' });
      // Nothing matched, so the job may already be completed: cancel answers it either way.
      expect(['cancelled', 'completed']).toContain((await ok('cancel_job', { jobId: job.jobId })).status);
      expect((await ok('list_jobs', { status: 'cancelled,completed' })).items.map((j: { jobId: string }) => j.jobId)).toContain(job.jobId);
      const note = await putNotification(api.table, slug, { kind: 'endpoint.disabled', message: 'via mcp' }, new Date());
      expect(await ok('ack_notification', { notificationId: note.notificationId })).toMatchObject({
        notificationId: note.notificationId,
        acknowledgedAt: expect.any(String),
      });
      expect((await ok('list_notifications', { acknowledged: 'true' })).items).toEqual([
        expect.objectContaining({ notificationId: note.notificationId }),
      ]);
      expect(await ok('test_webhook_filter', { filter: { 'data.id': { $prefix: 'o-' } }, payload: { data: { id: 'o-1' } } })).toEqual({
        matches: true,
      });
      const session = await ok('create_portal_session', { readOnly: true, expiresIn: 600 });
      expect(session.url).toMatch(/#portal=[A-Za-z0-9_-]{43}$/);
      expect((await ok('list_portal_sessions', {})).items.map((s: { sessionId: string }) => s.sessionId)).toContain(session.sessionId);
      await ok('revoke_portal_session', { sessionId: session.sessionId });
      expect((await api.call('GET', `/workspaces/${slug}/portal-sessions`)).body.items).toEqual([]);
      expect(await ok('set_branding', { displayName: 'Via MCP', accentColor: '#174A96' })).toEqual({
        displayName: 'Via MCP',
        accentColor: '#174a96',
      });
      expect(await ok('get_branding', {})).toEqual({ displayName: 'Via MCP', accentColor: '#174a96' });
      // Workspace-less: its own workspace for a workspace token; the staff session tools refuse it.
      const workspaces = await call('list_workspaces', {});
      expect([workspaces.isError ?? false, workspaces.structuredContent]).toEqual([
        false,
        { items: [{ slug, name: expect.any(String) }], nextCursor: null },
      ]);
      called.add('list_workspaces');
      for (const [name, args] of [
        ['list_console_sessions', {}],
        ['revoke_console_session', { sessionId: 'wcs_01JD2YF7G8H9J0K1M2N3P4Q5RS' }],
      ] as const) {
        const refused = await call(name, args);
        expect([name, refused.isError, refused.structuredContent?.tag]).toEqual([name, true, 'Forbidden']);
        called.add(name);
      }
      await ok('delete_webhook', { endpointId: created.endpointId });
      expect((await api.call('GET', `/workspaces/${slug}/webhooks/${created.endpointId}`)).status).toBe(404);
      expect([...called].sort()).toEqual(TOKEN_OPERATIONS.map((o) => o.mcpTool).sort());
    } finally {
      await r.stop();
    }
  });
});

describe('refusals', () => {
  it('a permission refusal is a tool error carrying the REST problem body', async () => {
    const { token } = await issueToken(api.table, api.workspace, { name: 'reader', scopes: ['read'] });
    const reader = await connect(token);
    const res = await call(
      'create_webhook',
      { slug: api.workspace, url: 'https://hooks.example.com/x', eventTypes: ['webhook.test_event'] },
      reader,
    );
    expect(res.isError).toBe(true);
    expect(res.structuredContent).toMatchObject({
      status: 403,
      tag: 'Forbidden',
      type: 'urn:problem:webhooks:Forbidden',
      requiredPermission: 'webhook:write',
    });
    expect((await call('list_webhooks', { slug: api.workspace }, reader)).isError ?? false).toBe(false);
  });

  it('another workspace is 404, an invalid URL 400, a disabled endpoint 409: as REST says', async () => {
    expect((await call('list_webhooks', { slug: 'someone-else' })).structuredContent).toMatchObject({
      status: 404,
      tag: 'WorkspaceNotFound',
    });
    expect(
      (await call('create_webhook', { slug: api.workspace, url: 'https://10.0.0.1/x', eventTypes: ['webhook.test_event'] }))
        .structuredContent,
    ).toMatchObject({
      status: 400,
      tag: 'InvalidWebhookUrl',
      rule: 'ip_not_public',
    });
    const ep = (
      await call('create_webhook', {
        slug: api.workspace,
        url: 'https://hooks.example.com/off',
        eventTypes: ['webhook.test_event'],
        enabled: false,
      })
    ).structuredContent;
    expect((await call('send_webhook_test_event', { slug: api.workspace, endpointId: ep.endpointId })).structuredContent).toMatchObject({
      status: 409,
      tag: 'EndpointDisabled',
    });
  });

  it('refuses an unknown argument with the problem REST gives an unknown body field, and writes nothing', async () => {
    const slug = api.workspace;
    const body = { url: 'https://hooks.example.com/strict', eventTypes: ['webhook.test_event'], secrett: 'typo' };
    const rest = await api.call('POST', `/workspaces/${slug}/webhooks`, { body });
    expect(rest.status).toBe(400);
    const tool = await call('create_webhook', { slug, ...body });
    expect(tool.isError).toBe(true);
    const { traceId: _restTrace, instance: _restInstance, ...restProblem } = rest.body as Record<string, unknown>;
    const { traceId: _toolTrace, instance: _toolInstance, ...toolProblem } = tool.structuredContent as Record<string, unknown>;
    expect(toolProblem).toEqual(restProblem);
    expect(toolProblem).toMatchObject({
      status: 400,
      tag: 'ValidationError',
      issues: [{ path: 'body', message: 'Unrecognized key: "secrett"' }],
    });
    const listed = await api.call('GET', `/workspaces/${slug}/webhooks?limit=200`);
    expect(listed.body.items.map((e: { url: string }) => e.url)).not.toContain(body.url);
    // A tool whose operation takes no body refuses any argument beyond its path and query fields, alike.
    const page = await call('list_webhooks', { slug, limit: 5, status: 'enabled' });
    expect(page.structuredContent).toMatchObject({
      status: 400,
      tag: 'ValidationError',
      issues: [{ path: 'body', message: 'Unrecognized key: "status"' }],
    });
    // The tools' input schemas say so.
    const { tools } = await client.listTools();
    expect(tools.filter((t) => t.inputSchema.additionalProperties !== false).map((t) => t.name)).toEqual([]);
  });

  it('401 at the gate for a missing or unknown token, 405 for GET, with problem bodies', async () => {
    const bad = new Client({ name: 'bad', version: '1' });
    await expect(
      bad.connect(
        new StreamableHTTPClientTransport(new URL(api.mcpUrl), { requestInit: { headers: { authorization: 'Bearer whk_nope' } } }),
      ),
    ).rejects.toThrow(/401|Unauthorized/);
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const res = await fetch(api.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(init),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ status: 401, tag: 'Unauthorized' });
    const get = await fetch(api.mcpUrl, { headers: { authorization: `Bearer ${api.token}`, accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(await get.json()).toMatchObject({ status: 405, tag: 'MethodNotAllowed' });
  });

  it('lets no browser origin in by default: a preflight gets no access-control-allow-origin (as the deployed URL)', async () => {
    const res = await fetch(api.mcpUrl, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://evil.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    // A real page's request gets no CORS grant either.
    const post = await fetch(api.mcpUrl, {
      method: 'POST',
      headers: {
        origin: 'https://evil.example',
        authorization: `Bearer ${api.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{}',
    });
    expect(post.headers.get('access-control-allow-origin')).toBeNull();
  });
});
