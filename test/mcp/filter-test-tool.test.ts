/**
 * The `test_webhook_filter` MCP tool through the official SDK client over real HTTP against the
 * local stack (docs/behaviour.md#payload-filters): the verdict REST gives, refusals as tool errors
 * carrying the REST problem body.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FILTER_TEST_EXAMPLES } from '../../lambdas/contract/filter-schemas';
import { issueToken } from '../../lambdas/operations/admin';
import { startTestApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
const clients: Client[] = [];

async function connect(token: string): Promise<Client> {
  const c = new Client({ name: 'filter-test', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(api.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  clients.push(c);
  return c;
}

beforeAll(async () => {
  api = await startTestApi({ schedules: false });
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await api?.close();
});

type ToolResult = { isError?: boolean; structuredContent?: any; content?: unknown };

describe('test_webhook_filter', () => {
  it('is listed as a read-only tool taking the workspace, the filter and the payload', async () => {
    const client = await connect(api.token);
    const tool = (await client.listTools()).tools.find((t) => t.name === 'test_webhook_filter');
    expect(tool?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(tool?.inputSchema.required).toEqual(['slug', 'filter', 'payload']);
    expect(tool?.description).toContain('webhook:read');
  });

  it('answers as REST does: the examples of the reference, matching and not', async () => {
    const client = await connect((await issueToken(api.table, api.workspace, { name: 'mcp-reader', scopes: ['read'] })).token);
    for (const example of FILTER_TEST_EXAMPLES) {
      const result = (await client.callTool({
        name: 'test_webhook_filter',
        arguments: { slug: api.workspace, ...example.request },
      })) as ToolResult;
      expect(result.isError ?? false).toBe(false);
      expect(result.structuredContent).toEqual(example.response);
      const rest = await api.call('POST', `/workspaces/${api.workspace}/webhooks/filter-test`, { body: example.request });
      expect(rest.body).toEqual(result.structuredContent);
    }
  });

  it('refuses an invalid filter with the REST problem, issues naming the places in the filter', async () => {
    const client = await connect(api.token);
    const result = (await client.callTool({
      name: 'test_webhook_filter',
      arguments: { slug: api.workspace, filter: { $and: [{ total: { $gt: 'ten' } }] }, payload: {} },
    })) as ToolResult;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      status: 400,
      tag: 'InvalidFilter',
      instance: 'test_webhook_filter',
      issues: [{ path: 'body.filter.$and[0].total.$gt', message: '$gt takes a finite number, not a string' }],
    });
  });

  it('needs webhook:read', async () => {
    const client = await connect((await issueToken(api.table, api.workspace, { name: 'mcp-narrow', scopes: ['webhook:list'] })).token);
    const result = (await client.callTool({
      name: 'test_webhook_filter',
      arguments: { slug: api.workspace, filter: {}, payload: {} },
    })) as ToolResult;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ status: 403, tag: 'Forbidden', requiredPermission: 'webhook:read' });
  });
});
