/**
 * What MCP tool calls cost, over real HTTP against the local stack: each call
 * is one hit in the `mcp` bucket and one in its operation's own bucket (the
 * one REST charges), a JSON-RPC batch cannot buy 100 calls for one hit, and an
 * exhausted operation bucket refuses the call with the REST problem (429
 * `RateLimited`) as a tool error. Buckets are read from the contract, so the
 * test follows it if an operation moves to another bucket.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS, type OperationDef } from '../../lambdas/contract/operations';
import type { RateLimitBucket } from '../../lambdas/contract/rate-limits';
import { issueToken } from '../../lambdas/operations/admin';
import { keys } from '../../lambdas/store/table-schema';
import { startTestApi, type TestApi } from '../helpers/local-api';

const tool = (name: string) => ({ ...(OPERATIONS as readonly OperationDef[]).find((o) => o.mcpTool === name)!, mcpTool: name });
const READ_TOOL = tool('list_event_types');
const WRITE_TOOL = tool('update_webhook');
const CREATE_TOOL = tool('create_webhook');
/** The read tool's bucket allows exactly CALLS calls in the test's (day-long) window. */
const CALLS = 100;
/** The write tools' bucket: one create and two updates fit, the third update does not. */
const WRITES = 3;
const DAY = 86_400;

let api: TestApi;
const clients: Client[] = [];

beforeAll(async () => {
  expect(READ_TOOL.rateLimit).not.toBe(WRITE_TOOL.rateLimit);
  expect(CREATE_TOOL.rateLimit).toBe(WRITE_TOOL.rateLimit);
  const quotas: Partial<Record<RateLimitBucket, { limit: number; windowSeconds: number }>> = {
    mcp: { limit: 10_000, windowSeconds: DAY },
    [READ_TOOL.rateLimit]: { limit: CALLS, windowSeconds: DAY },
    [WRITE_TOOL.rateLimit]: { limit: WRITES, windowSeconds: DAY },
  };
  api = await startTestApi({ timeScale: 1000, schedules: false, onPipelineError: () => undefined, rateLimits: JSON.stringify(quotas) });
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await api?.close();
});

/** Hits counted for a token in a bucket, over every window. */
async function hits(bucket: RateLimitBucket, tokenId: string): Promise<number> {
  const out = await api.table.doc.send(
    new QueryCommand({
      TableName: api.table.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.rateLimit(bucket, tokenId, 0).pk },
    }),
  );
  return (out.Items ?? []).reduce((sum, item) => sum + Number(item.hits ?? 0), 0);
}

function post(token: string, body: unknown): Promise<Response> {
  return fetch(api.mcpUrl, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify(body),
  });
}

const toolCall = (id: number, name: string, args: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

describe('MCP tool calls and the rate limits', () => {
  it('refuses a JSON-RPC batch of 100 tool calls: none runs, none is counted', async () => {
    const { token, tokenId } = await issueToken(api.table, api.workspace, { name: 'batcher', scopes: ['admin'] });
    const batch = Array.from({ length: 100 }, (_, i) => toolCall(i + 1, READ_TOOL.mcpTool, { slug: api.workspace }));
    const res = await post(token, batch);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ status: 400, tag: 'ValidationError', detail: expect.stringMatching(/batch/i) });
    expect(await hits('mcp', tokenId)).toBe(0);
    expect(await hits(READ_TOOL.rateLimit, tokenId)).toBe(0);
  });

  it(`charges ${CALLS} calls ${CALLS} units of mcp and of the tool's own bucket; the next call is refused with 429 RateLimited`, async () => {
    const { token, tokenId } = await issueToken(api.table, api.workspace, { name: 'caller', scopes: ['admin'] });
    for (let i = 1; i <= CALLS; i++) {
      const res = await post(token, toolCall(i, READ_TOOL.mcpTool, { slug: api.workspace }));
      expect(res.status).toBe(200);
      const body = (await res.json()) as { result: { isError?: boolean } };
      expect([i, body.result.isError ?? false]).toEqual([i, false]);
    }
    expect(await hits('mcp', tokenId)).toBe(CALLS);
    expect(await hits(READ_TOOL.rateLimit, tokenId)).toBe(CALLS);

    const over = await post(token, toolCall(CALLS + 1, READ_TOOL.mcpTool, { slug: api.workspace }));
    expect(over.status).toBe(200);
    const result = ((await over.json()) as { result: { isError?: boolean; structuredContent: Record<string, unknown> } }).result;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      status: 429,
      tag: 'RateLimited',
      type: 'urn:problem:webhooks:RateLimited',
      instance: READ_TOOL.mcpTool,
      detail: expect.stringMatching(new RegExp(`Too many ${READ_TOOL.rateLimit} requests for this token; retry after \\d+ s`)),
    });
    // The refused call still went through the gate: one more mcp hit, one more (refused) bucket hit.
    expect(await hits('mcp', tokenId)).toBe(CALLS + 1);
    // Other buckets are untouched: a write tool still runs.
    expect(await hits(WRITE_TOOL.rateLimit, tokenId)).toBe(0);
  }, 120_000);

  it('charges write tools to their own bucket through the official client, refusing past the quota', async () => {
    const { token, tokenId } = await issueToken(api.table, api.workspace, { name: 'writer', scopes: ['admin'] });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(api.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    );
    clients.push(client);
    type Result = { isError?: boolean; structuredContent?: Record<string, unknown> };
    const call = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: { slug: api.workspace, ...args } })) as Result;

    const created = await call(CREATE_TOOL.mcpTool, { url: 'https://hooks.example.com/limits', eventTypes: ['webhook.test_event'] });
    expect(created.isError ?? false).toBe(false);
    const endpointId = created.structuredContent!.endpointId as string;
    for (let i = 1; i < WRITES; i++)
      expect((await call(WRITE_TOOL.mcpTool, { endpointId, description: `n${i}` })).isError ?? false).toBe(false);
    const refused = await call(WRITE_TOOL.mcpTool, { endpointId, description: 'one too many' });
    expect(refused).toMatchObject({ isError: true, structuredContent: { status: 429, tag: 'RateLimited' } });
    // The refused update changed nothing.
    expect((await api.call('GET', `/workspaces/${api.workspace}/webhooks/${endpointId}`)).body.description).toBe(`n${WRITES - 1}`);
    expect(await hits(WRITE_TOOL.rateLimit, tokenId)).toBe(WRITES + 1);
    // Reads are another bucket and still run.
    expect((await call(READ_TOOL.mcpTool, {})).isError ?? false).toBe(false);
  });
});
