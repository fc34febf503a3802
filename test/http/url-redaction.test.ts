/**
 * Capability URLs (docs/behaviour.md#url-redaction) in the real local stack: a write-scope token
 * sees endpoint URLs in full on REST and MCP; a read-scope token sees `scheme://host/…`; audit
 * entries, notifications (a dead letter) and the service's own domain events as another endpoint
 * of the workspace receives them carry only the redacted form. The URL's secret path and its
 * `?token=abc` query appear in none of those.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { issueToken } from '../../lambdas/operations/admin';
import { usePipelineApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
const ws = () => `/workspaces/${api.workspace}`;
const pipeline = usePipelineApi();
const receiver = pipeline.receiver;
const clients: Client[] = [];
let readToken: string;

/** How long the pipeline gets to reach a state, and how often it is looked at. */
const EVENTUALLY = { timeout: 15_000, interval: 25 };
/** The capability parts of the receivers' URLs: neither may leak. */
const SECRET_PATH = 'cap-7f3a9c1e5b';
const SECRET_QUERY = 'token=abc';
const LEAKS = new RegExp(`${SECRET_PATH}|${SECRET_QUERY}|/in/`);

beforeAll(async () => {
  api = pipeline.api;
  readToken = (await issueToken(api.table, api.workspace, { name: 'reader', scopes: ['read'] })).token;
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
});

async function mcpClient(token: string): Promise<Client> {
  const c = new Client({ name: 'test', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(api.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  clients.push(c);
  return c;
}

async function tool(c: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const res = (await c.callTool({ name, arguments: { slug: api.workspace, ...args } })) as {
    isError?: boolean;
    structuredContent?: unknown;
  };
  expect([name, res.isError ?? false]).toEqual([name, false]);
  return res.structuredContent;
}

async function create(url: string, eventTypes = ['webhook.test_event']): Promise<string> {
  const res = await api.call('POST', `${ws()}/webhooks`, { body: { url, eventTypes } });
  expect(res.status).toBe(201);
  return res.body.endpointId as string;
}

describe('endpoint resources', () => {
  it('show the full URL to a write token and scheme://host/… to a read token, on REST get and list and on MCP', async () => {
    const url = `https://hooks.example.com/in/${SECRET_PATH}?${SECRET_QUERY}`;
    const created = await api.call('POST', `${ws()}/webhooks`, { body: { url, eventTypes: ['webhook.test_event'] } });
    expect(created.body.url).toBe(url);
    const id = created.body.endpointId as string;

    // Write scope (the stack's admin token): in full.
    expect((await api.call('GET', `${ws()}/webhooks/${id}`)).body.url).toBe(url);
    const listed = await api.call('GET', `${ws()}/webhooks?limit=200`);
    expect(listed.body.items.find((e: { endpointId: string }) => e.endpointId === id).url).toBe(url);
    const writer = await mcpClient(api.token);
    expect((await tool(writer, 'get_webhook', { endpointId: id })).url).toBe(url);
    expect((await tool(writer, 'list_webhooks', { limit: 200 })).items.find((e: { endpointId: string }) => e.endpointId === id).url).toBe(
      url,
    );

    // Read scope: redacted, and nothing of the path or query anywhere in the answers.
    const got = await api.call('GET', `${ws()}/webhooks/${id}`, { token: readToken });
    expect(got.status).toBe(200);
    expect(got.body.url).toBe('https://hooks.example.com/…');
    const readList = await api.call('GET', `${ws()}/webhooks?limit=200`, { token: readToken });
    expect(readList.body.items.find((e: { endpointId: string }) => e.endpointId === id).url).toBe('https://hooks.example.com/…');
    expect(readList.body.items.length).toBeGreaterThan(0);
    for (const e of readList.body.items as { url: string }[]) expect(e.url).toMatch(/^https?:\/\/[^/]+\/…$/);
    expect(got.text + readList.text).not.toMatch(LEAKS);

    const reader = await mcpClient(readToken);
    const mcpGot = await tool(reader, 'get_webhook', { endpointId: id });
    expect(mcpGot.url).toBe('https://hooks.example.com/…');
    const mcpList = await tool(reader, 'list_webhooks', { limit: 200 });
    expect(mcpList.items.find((e: { endpointId: string }) => e.endpointId === id).url).toBe('https://hooks.example.com/…');
    expect(JSON.stringify([mcpGot, mcpList])).not.toMatch(LEAKS);
  });

  it('keeps a non-default port in the redacted form', async () => {
    const id = await create(`https://hooks.example.com:8443/in/${SECRET_PATH}?${SECRET_QUERY}`);
    expect((await api.call('GET', `${ws()}/webhooks/${id}`, { token: readToken })).body.url).toBe('https://hooks.example.com:8443/…');
  });
});

describe('audit entries and domain events', () => {
  it('carry scheme://host/… for create, update and delete, to every caller and every subscribed endpoint', async () => {
    const r = await receiver((_req, res) => res.writeHead(204).end());
    await create(r.url, ['webhook.created', 'webhook.updated', 'webhook.deleted']);

    const id = await create(`https://hooks.example.com/in/${SECRET_PATH}?${SECRET_QUERY}`);
    const patched = await api.call('PATCH', `${ws()}/webhooks/${id}`, {
      body: { url: `https://other.example.com:8443/in/${SECRET_PATH}/v2?${SECRET_QUERY}` },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.url).toBe(`https://other.example.com:8443/in/${SECRET_PATH}/v2?${SECRET_QUERY}`);
    expect((await api.call('DELETE', `${ws()}/webhooks/${id}`)).status).toBe(204);

    // Domain events, as another endpoint of the workspace receives them.
    const events = await vi.waitFor(() => {
      const mine = r.seen
        .map((s) => JSON.parse(s.body) as { eventType: string; payload: { endpointId: string; url: string } })
        .filter((b) => b.payload.endpointId === id);
      expect(mine.map((b) => b.eventType).sort()).toEqual(['webhook.created', 'webhook.deleted', 'webhook.updated']);
      return mine;
    }, EVENTUALLY);
    const urlOf = (type: string) => events.find((e) => e.eventType === type)!.payload.url;
    expect(urlOf('webhook.created')).toBe('https://hooks.example.com/…');
    expect(urlOf('webhook.updated')).toBe('https://other.example.com:8443/…');
    expect(urlOf('webhook.deleted')).toBe('https://other.example.com:8443/…');
    expect(r.seen.map((s) => s.body).join('\n')).not.toMatch(LEAKS);

    // Audit entries: the same for a write and a read token.
    for (const token of [api.token, readToken]) {
      const audit = await api.call('GET', `${ws()}/audit-events?limit=200`, { token });
      expect(audit.status).toBe(200);
      const entries = (audit.body.items as { action: string; targetId: string; detail: Record<string, unknown> | null }[]).filter(
        (a) => a.targetId === id,
      );
      expect(entries.map((a) => a.action).sort()).toEqual(['webhook.created', 'webhook.deleted', 'webhook.updated']);
      expect(entries.find((a) => a.action === 'webhook.created')!.detail).toMatchObject({ url: 'https://hooks.example.com/…' });
      expect(entries.find((a) => a.action === 'webhook.updated')!.detail).toMatchObject({
        changed: ['url'],
        url: 'https://other.example.com:8443/…',
      });
      expect(audit.text).not.toMatch(LEAKS);
    }
  });
});

describe('notifications', () => {
  it('a dead letter names the endpoint by scheme://host/… only', async () => {
    const r = await receiver((_req, res) => res.writeHead(503).end());
    const port = new URL(r.url).port;
    const endpointId = await create(`http://127.0.0.1:${port}/in/${SECRET_PATH}?${SECRET_QUERY}`);
    const sent = await api.call('POST', `${ws()}/webhooks/${endpointId}/test-event`);
    expect(sent.status).toBe(202);
    const note = await vi.waitFor(async () => {
      const n = await api.call('GET', `${ws()}/notifications`, { token: readToken });
      const found = (n.body.items as { deliveryId: string; kind: string; message: string }[]).find(
        (x) => x.deliveryId === sent.body.deliveryId,
      );
      expect(found, 'notification').toBeDefined();
      return found!;
    }, EVENTUALLY);
    // The receiver was called at the full URL: the redaction is only in what people read.
    expect(r.seen[0]!.path).toBe(`/in/${SECRET_PATH}?${SECRET_QUERY}`);
    expect(note.kind).toBe('delivery.dead_lettered');
    expect(note.message).toContain(`to http://127.0.0.1:${port}/… stopped`);
    expect(note.message).not.toMatch(LEAKS);
    expect((await api.call('GET', `${ws()}/notifications?limit=200`)).text).not.toMatch(LEAKS);
  });
});
