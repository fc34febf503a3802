/**
 * Endpoint options through the `create_webhook`, `update_webhook` and `get_webhook` MCP tools, with
 * the official SDK client over real HTTP against the local stack (docs/behaviour.md#custom-headers):
 * the tools' input schemas describe them, they do what REST does, a read token sees names only, and
 * refusals are tool errors carrying the REST problem (its tag and the path naming the header).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDACTED } from '../../lambdas/contract/limits';
import { issueToken } from '../../lambdas/operations/admin';
import { startTestApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
let writer: Client;
let reader: Client;
const clients: Client[] = [];
const API_KEY = 'mcp-api-key-value-6d2e';
const CLIENT_SECRET = 'mcp-client-secret-1f7a';
const AUTH = {
  type: 'oauth2_client_credentials',
  tokenUrl: 'https://auth.example.com/token',
  clientId: 'mcp-sender',
  clientSecret: CLIENT_SECRET,
};

type ToolResult = { isError?: boolean; structuredContent?: any };

async function connect(token: string): Promise<Client> {
  const c = new Client({ name: 'endpoint-options', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(api.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  clients.push(c);
  return c;
}

const call = async (c: Client, name: string, args: Record<string, unknown>) =>
  (await c.callTool({ name, arguments: { slug: api.workspace, ...args } })) as ToolResult;

beforeAll(async () => {
  api = await startTestApi({ schedules: false });
  writer = await connect(api.token);
  reader = await connect((await issueToken(api.table, api.workspace, { name: 'mcp-reader', scopes: ['read'] })).token);
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await api?.close();
});

describe('endpoint options over MCP', () => {
  it('create_webhook and update_webhook describe headers, auth, rateLimitPerSecond and filter', async () => {
    const tools = (await writer.listTools()).tools;
    for (const name of ['create_webhook', 'update_webhook']) {
      const properties = tools.find((t) => t.name === name)!.inputSchema.properties as Record<string, { description?: string }>;
      expect(Object.keys(properties)).toEqual(expect.arrayContaining(['headers', 'auth', 'rateLimitPerSecond', 'filter']));
      expect(properties.headers!.description).toContain('InvalidHeader');
    }
  });

  it('create, update and get carry the options as REST does; the secrets are never shown', async () => {
    const created = await call(writer, 'create_webhook', {
      url: 'https://hooks.example.com/mcp',
      eventTypes: ['webhook.test_event'],
      headers: { 'X-Tenant': 'acme', 'X-Api-Key': API_KEY },
      auth: AUTH,
      rateLimitPerSecond: 3,
      filter: { 'data.region': 'eu' },
    });
    expect(created.isError ?? false).toBe(false);
    expect(created.structuredContent).toMatchObject({
      headers: { 'X-Tenant': 'acme', 'X-Api-Key': REDACTED },
      auth: { type: 'oauth2_client_credentials', tokenUrl: AUTH.tokenUrl, clientId: 'mcp-sender' },
      rateLimitPerSecond: 3,
      filter: { 'data.region': 'eu' },
    });
    const endpointId = created.structuredContent.endpointId as string;

    const updated = await call(writer, 'update_webhook', {
      endpointId,
      headers: { 'X-Tenant': null, 'X-Region': 'eu-west' },
      rateLimitPerSecond: null,
      auth: { ...AUTH, clientSecret: undefined, clientId: 'mcp-sender-2' },
    });
    expect(updated.isError ?? false).toBe(false);
    expect(updated.structuredContent).toMatchObject({
      headers: { 'X-Api-Key': REDACTED, 'X-Region': 'eu-west' },
      auth: { clientId: 'mcp-sender-2' },
      rateLimitPerSecond: null,
    });
    const rest = await api.call('GET', `/workspaces/${api.workspace}/webhooks/${endpointId}`);
    expect(rest.body).toMatchObject({ headers: updated.structuredContent.headers, auth: updated.structuredContent.auth });

    const read = await call(reader, 'get_webhook', { endpointId });
    expect(read.structuredContent).toMatchObject({
      headers: { 'X-Api-Key': REDACTED, 'X-Region': REDACTED },
      auth: { tokenUrl: 'https://auth.example.com/…' },
    });
    for (const text of [created, updated, read].map((r) => JSON.stringify(r))) {
      expect(text).not.toContain(API_KEY);
      expect(text).not.toContain(CLIENT_SECRET);
      expect(text).not.toContain('clientSecret');
    }
    expect(JSON.stringify(read)).not.toContain('eu-west');
  });

  it('refuses as REST does: tool errors with the problem, naming the header or the auth field', async () => {
    const reserved = await call(writer, 'create_webhook', {
      url: 'https://hooks.example.com/mcp',
      eventTypes: ['webhook.test_event'],
      headers: { 'Webhook-Id': 'forged' },
    });
    expect(reserved.isError).toBe(true);
    expect(reserved.structuredContent).toMatchObject({
      status: 400,
      tag: 'InvalidHeader',
      instance: 'create_webhook',
      issues: [{ path: 'body.headers["Webhook-Id"]', message: expect.stringContaining('Webhook-Id') }],
    });
    const badUrl = await call(writer, 'create_webhook', {
      url: 'https://hooks.example.com/mcp',
      eventTypes: ['webhook.test_event'],
      auth: { ...AUTH, tokenUrl: 'http://auth.example.com/token' },
    });
    expect(badUrl.structuredContent).toMatchObject({ status: 400, tag: 'InvalidAuth', issues: [{ path: 'body.auth.tokenUrl' }] });

    const created = await call(writer, 'create_webhook', { url: 'https://hooks.example.com/mcp', eventTypes: ['webhook.test_event'] });
    const endpointId = created.structuredContent.endpointId as string;
    const noSecret = await call(writer, 'update_webhook', { endpointId, auth: { ...AUTH, clientSecret: undefined } });
    expect(noSecret.structuredContent).toMatchObject({ status: 400, tag: 'InvalidAuth', issues: [{ path: 'body.auth.clientSecret' }] });
    const badValue = await call(writer, 'update_webhook', { endpointId, headers: { 'X-Bad': 'a\nb' } });
    expect(badValue.structuredContent).toMatchObject({ status: 400, tag: 'InvalidHeader', issues: [{ path: 'body.headers["X-Bad"]' }] });
    const readOnly = await call(reader, 'update_webhook', { endpointId, headers: { 'X-Tenant': 'x' } });
    expect(readOnly.structuredContent).toMatchObject({ status: 403, tag: 'Forbidden' });
  });
});
