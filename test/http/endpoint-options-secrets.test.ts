/**
 * Custom headers and OAuth 2.0 from REST to the receiver, and where their secrets never go
 * (docs/behaviour.md#custom-headers, docs/behaviour.md#oauth-20-client-credentials), through the
 * real local stack: an endpoint created and changed over REST with a plain and two secret headers
 * and OAuth 2.0 against a real OAuth server on loopback (`oidc-provider`, client credentials), an
 * event published through the stack's front, delivered to a loopback receiver that checks the
 * bearer token with the OAuth server, and one the endpoint's filter does not match, not delivered.
 * Then every item of the table and the outbox, every log line the stack wrote, every REST and MCP
 * answer about the endpoint, its deliveries, attempts, the audit, and the domain events another
 * endpoint received are searched for each secret value set: none is anywhere.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { REDACTED } from '../../lambdas/contract/limits';
import { issueToken } from '../../lambdas/operations/admin';
import { usePipelineApi, type TestApi } from '../helpers/local-api';
import type { SeenRequest } from '../helpers/scripted-receiver';

const TENANT = 'tenant-plain-5e2a';
const API_KEY = 'api-key-secret-91c3d7';
const OTHER_TOKEN = 'other-token-secret-4b8f1a';
const CLIENT_SECRET = 'client-secret-value-d06e9b';
const EVENTUALLY = { timeout: 15_000, interval: 25 };

/** What the stack wrote to its logs (stdout, stderr, the console, pipeline errors). */
const logged: string[] = [];
// Every level the functions' logger has: it reads the level when the stack loads it, in this file's `beforeAll`.
const logLevel = process.env.POWERTOOLS_LOG_LEVEL;
process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
const pipeline = usePipelineApi({ onPipelineError: (where, error) => void logged.push(`${where} ${String(error)}`) });
let api: TestApi;
let provider: Provider;
let oauthServer: Server;
let tokenUrl: string;
let readToken: string;
const clients: Client[] = [];
const restores: (() => void)[] = [];

beforeAll(async () => {
  api = pipeline.api;
  readToken = (await issueToken(api.table, api.workspace, { name: 'reader', scopes: ['read'] })).token;
  oauthServer = createServer();
  await new Promise<void>((ok) => oauthServer.listen(0, '127.0.0.1', () => ok()));
  const issuer = `http://127.0.0.1:${(oauthServer.address() as AddressInfo).port}`;
  provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'sender',
        client_secret: CLIENT_SECRET,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
        scope: 'hooks',
      },
    ],
    scopes: ['hooks'],
    features: { clientCredentials: { enabled: true }, devInteractions: { enabled: false } },
    ttl: { ClientCredentials: 600 },
  });
  const callback = provider.callback();
  oauthServer.on('request', (req, res) => void callback(req, res));
  tokenUrl = `${issuer}/token`;
  // Every line the stack writes, wherever it writes it.
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    stream.write = (chunk: string, ...rest: never[]) => {
      logged.push(String(chunk));
      return write(chunk, ...rest);
    };
    restores.push(() => (stream.write = write));
  }
  for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    const spy = vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(' ')));
    restores.push(() => spy.mockRestore());
  }
});
afterAll(async () => {
  restores.splice(0).forEach((r) => r());
  if (logLevel === undefined) delete process.env.POWERTOOLS_LOG_LEVEL;
  else process.env.POWERTOOLS_LOG_LEVEL = logLevel;
  await Promise.allSettled(clients.map((c) => c.close()));
  oauthServer?.closeAllConnections();
  await new Promise<void>((ok) => (oauthServer ? oauthServer.close(() => ok()) : ok()));
});

async function mcpTool(token: string, name: string, args: Record<string, unknown>): Promise<string> {
  const c = new Client({ name: 'secrets-test', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(api.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  clients.push(c);
  const res = await c.callTool({ name, arguments: { slug: api.workspace, ...args } });
  expect([name, res.isError ?? false]).toEqual([name, false]);
  return JSON.stringify(res);
}

async function scan(tableName: string): Promise<unknown[]> {
  const items: unknown[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await api.table.doc.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

describe('secrets set through REST', () => {
  it('reach the receiver, and no item, log line, answer, audit entry or event holds one', async () => {
    const ws = `/workspaces/${api.workspace}`;
    // Another endpoint of the workspace receives the service's own events about the first.
    const events = await pipeline.receiver((_req, res) => res.writeHead(204).end());
    expect(
      (await api.call('POST', `${ws}/webhooks`, { body: { url: events.url, eventTypes: ['webhook.created', 'webhook.updated'] } })).status,
    ).toBe(201);
    // The receiver accepts only a bearer token the OAuth server issued and still honours.
    const receiver = await pipeline.receiver((req: SeenRequest, res) => {
      const token = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
      void (async () => {
        const found = token ? await provider.ClientCredentials.find(token) : undefined;
        res.writeHead(found ? 204 : 401).end();
      })();
    });

    // With an idempotency key: its record is searched too.
    const created = await api.call('POST', `${ws}/webhooks`, {
      headers: { 'idempotency-key': 'secrets-create-1' },
      body: {
        url: receiver.url,
        eventTypes: ['order.shipped'],
        headers: { 'X-Tenant': TENANT, 'X-Api-Key': API_KEY },
        auth: { type: 'oauth2_client_credentials', tokenUrl, clientId: 'sender', clientSecret: CLIENT_SECRET, scope: 'hooks' },
        rateLimitPerSecond: 50,
        filter: { orderId: { $prefix: 'ord-' } },
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.endpointId as string;
    const patched = await api.call('PATCH', `${ws}/webhooks/${id}`, { body: { headers: { 'X-Other-Token': OTHER_TOKEN }, enabled: true } });
    expect(patched.status).toBe(200);
    expect(patched.body.headers).toEqual({ 'X-Tenant': TENANT, 'X-Api-Key': REDACTED, 'X-Other-Token': REDACTED });

    // Published through the stack's front: one event the filter matches, one it does not.
    for (const orderId of ['skip-1', 'ord-1']) {
      const published = await api.call('POST', '/local/events', {
        body: { workspace: api.workspace, type: 'order.shipped', payload: { orderId } },
      });
      expect(published.status).toBe(202);
    }
    const seen = await vi.waitFor(
      () => receiver.seen.find((r) => r.headers.authorization) ?? Promise.reject(new Error('not yet')),
      EVENTUALLY,
    );
    expect(seen.headers['x-tenant']).toBe(TENANT);
    expect(seen.headers['x-api-key']).toBe(API_KEY);
    expect(seen.headers['x-other-token']).toBe(OTHER_TOKEN);
    expect(seen.headers.authorization).toMatch(/^Bearer \S+$/);
    expect(JSON.parse(seen.body).payload).toEqual({ orderId: 'ord-1' });
    const bearer = String(seen.headers.authorization).slice('Bearer '.length);
    const deliveries = await vi.waitFor(async () => {
      const page = await api.call('GET', `${ws}/webhooks/${id}/deliveries?limit=20`);
      expect(page.body.items.map((d: { status: string }) => d.status)).toEqual(['delivered']);
      return page;
    }, EVENTUALLY);
    // Only the matching event was delivered, once.
    expect(receiver.seen).toHaveLength(1);
    const deliveryId = deliveries.body.items[0].deliveryId as string;
    const attempts = await api.call('GET', `${ws}/webhooks/deliveries/${deliveryId}/attempts`);
    expect(attempts.body.items[0].requestHeaders).toMatchObject({
      'X-Tenant': TENANT,
      'X-Api-Key': REDACTED,
      'X-Other-Token': REDACTED,
      authorization: REDACTED,
    });
    await api.outboxCaughtUp();
    await vi.waitFor(() => {
      const types = events.seen.map((s) => JSON.parse(s.body) as { eventType: string; payload: { endpointId: string } });
      expect(types.filter((e) => e.payload.endpointId === id).map((e) => e.eventType)).toEqual(['webhook.created', 'webhook.updated']);
    }, EVENTUALLY);

    const answers: string[] = [created.text, patched.text, deliveries.text, attempts.text];
    for (const token of [api.token, readToken]) {
      for (const path of [
        `${ws}/webhooks/${id}`,
        `${ws}/webhooks?limit=100`,
        `${ws}/audit-events?limit=100`,
        `${ws}/webhooks/deliveries/${deliveryId}`,
        `${ws}/webhooks/deliveries/${deliveryId}/attempts`,
        `${ws}/deliveries?limit=100`,
        `${ws}/notifications?limit=100`,
        `${ws}/overview`,
      ]) {
        const res = await api.call('GET', path, { token });
        expect([path, res.status]).toEqual([path, 200]);
        answers.push(res.text);
      }
      answers.push(await mcpTool(token, 'get_webhook', { endpointId: id }));
      answers.push(await mcpTool(token, 'list_webhooks', { limit: 100 }));
      answers.push(await mcpTool(token, 'list_webhook_delivery_attempts', { deliveryId }));
      answers.push(await mcpTool(token, 'list_audit_events', { limit: 100 }));
    }
    const audit = JSON.parse(answers.find((a) => a.includes('"webhook.updated"') && a.includes('auditEventId'))!) as {
      items: { action: string; targetId: string; detail: Record<string, unknown> }[];
    };
    expect(audit.items.find((a) => a.action === 'webhook.updated' && a.targetId === id)!.detail).toMatchObject({
      changed: ['enabled', 'headers'],
      headersSet: ['X-Other-Token'],
      headersRemoved: [],
    });

    const places = {
      table: JSON.stringify(await scan(api.table.tableName)),
      outbox: JSON.stringify(await scan(api.outboxTableName)),
      logs: logged.join('\n'),
      answers: answers.join('\n'),
      events: events.seen.map((s) => s.body).join('\n'),
    };
    // The search finds what is there: the plain header's value is in the table and the answers.
    expect(places.table).toContain(TENANT);
    expect(places.answers).toContain(TENANT);
    expect(places.outbox).toContain(id);
    expect(places.logs).toContain('"level":"DEBUG"');
    for (const [place, text] of Object.entries(places))
      for (const secret of [API_KEY, OTHER_TOKEN, CLIENT_SECRET, bearer])
        expect(`${place} holds ${secret}: ${text.includes(secret)}`).toBe(`${place} holds ${secret}: false`);
  });
});
