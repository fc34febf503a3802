/**
 * Pages end early by bytes (docs/behaviour.md#pagination): 200 summaries with 220 KiB payloads
 * are far over Lambda's 6 MB response limit, so a page at limit 200 comes back short with a
 * `nextCursor`, its serialized Lambda response under the limit, through the local REST front and
 * the official MCP client; following the cursors yields every delivery exactly once. A payload of
 * quotes and control characters, which JSON escaping grows, is measured as it is serialized.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAMBDA_SYNC_PAYLOAD_BYTES } from '../../lambdas/contract/aws-limits';
import { PAGE_RESPONSE_BUDGET_BYTES } from '../../lambdas/contract/pagination';
import { newPendingDelivery } from '../../lambdas/domain/delivery-lifecycle';
import { putPendingDeliveries } from '../../lambdas/store/deliveries';
import { startTestApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
let mcp: Client;
const ws = () => `/workspaces/${api.workspace}`;

beforeAll(async () => {
  api = await startTestApi({ timeScale: 1000, schedules: false, onPipelineError: () => undefined });
  mcp = new Client({ name: 'test', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(api.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${api.token}` } } }),
  );
}, 60_000);
afterAll(async () => {
  await mcp?.close();
  await api?.close();
});

/** An endpoint (never sent to: its deliveries are written straight to the table) with `count` deliveries of `payload`, newest last. */
async function endpointWith(count: number, payload: (i: number) => unknown): Promise<{ endpointId: string; deliveryIds: string[] }> {
  const created = await api.call('POST', `${ws()}/webhooks`, {
    body: { url: 'https://hooks.example.com/pages', eventTypes: ['order.shipped'] },
  });
  expect(created.status).toBe(201);
  const endpointId = created.body.endpointId as string;
  const start = Date.now() - 60_000;
  const records = Array.from({ length: count }, (_, i) =>
    newPendingDelivery(
      { workspace: api.workspace, endpointId, eventType: 'order.shipped', payload: payload(i), replayedFrom: null },
      new Date(start + i),
    ),
  );
  await putPendingDeliveries(api.table, records);
  return { endpointId, deliveryIds: records.map((r) => r.deliveryId) };
}

/** The REST function's Lambda response as Lambda serialized it: the proxy result with the body escaped inside. */
const restLambdaBytes = (status: number, headers: Headers, body: string) =>
  Buffer.byteLength(
    JSON.stringify({
      statusCode: status,
      headers: {
        'content-type': headers.get('content-type'),
        'x-trace-id': headers.get('x-trace-id'),
        'cache-control': headers.get('cache-control'),
      },
      body,
    }),
  );

/** The MCP function's Lambda response: the function URL result whose body is the JSON-RPC answer. */
const mcpLambdaBytes = (result: unknown) =>
  Buffer.byteLength(
    JSON.stringify({
      statusCode: 200,
      headers: { 'content-type': 'application/json', 'x-trace-id': '00000000-0000-0000-0000-000000000000' },
      body: JSON.stringify({ result, jsonrpc: '2.0', id: 1 }),
    }),
  );

const KIB = 1024;
const sizes: Record<string, number[]> = {};

describe('pages end early by bytes', () => {
  let big: { endpointId: string; deliveryIds: string[] };
  beforeAll(async () => {
    big = await endpointWith(200, (i) => ({ orderId: `o-${i}`, blob: 'x'.repeat(220 * KIB) }));
  }, 120_000);

  it('REST: a page of 200 summaries with 220 KiB payloads comes back short, under the limit, and the cursors give each delivery once', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await api.call('GET', `${ws()}/webhooks/${big.endpointId}/deliveries?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      const bytes = restLambdaBytes(res.status, res.headers, res.text);
      (sizes.rest ??= []).push(bytes);
      expect(bytes).toBeLessThanOrEqual(PAGE_RESPONSE_BUDGET_BYTES);
      if (pages === 0) {
        expect(res.body.items.length).toBeLessThan(200);
        expect(res.body.items.length).toBeGreaterThan(20);
        expect(res.body.nextCursor).toEqual(expect.any(String));
      }
      seen.push(...(res.body.items as { deliveryId: string }[]).map((d) => d.deliveryId));
      cursor = res.body.nextCursor as string | null;
      pages++;
    } while (cursor !== null && pages < 50);
    expect(cursor).toBeNull();
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...big.deliveryIds].reverse());
    expect(sizes.rest.every((b) => b < LAMBDA_SYNC_PAYLOAD_BYTES)).toBe(true);
  }, 120_000);

  it('MCP: the same page through the official client comes back short, under the limit', async () => {
    const result = await mcp.callTool({
      name: 'list_webhook_deliveries',
      arguments: { slug: api.workspace, endpointId: big.endpointId, limit: 200 },
    });
    expect(result.isError ?? false).toBe(false);
    const page = result.structuredContent as { items: { deliveryId: string }[]; nextCursor: string | null };
    const bytes = mcpLambdaBytes(result);
    (sizes.mcp ??= []).push(bytes);
    expect(bytes).toBeLessThanOrEqual(PAGE_RESPONSE_BUDGET_BYTES);
    expect(page.items.length).toBeLessThan(200);
    expect(page.items.map((d) => d.deliveryId)).toEqual([...big.deliveryIds].reverse().slice(0, page.items.length));
    expect(page.nextCursor).toEqual(expect.any(String));
  }, 60_000);

  it('MCP: following the workspace delivery log cursors gives each delivery once, every answer under the limit', async () => {
    const medium = await endpointWith(60, (i) => ({ orderId: `m-${i}`, blob: 'x'.repeat(220 * KIB) }));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const result = await mcp.callTool({
        name: 'list_deliveries',
        arguments: { slug: api.workspace, endpointId: medium.endpointId, limit: 200, ...(cursor ? { cursor } : {}) },
      });
      expect(result.isError ?? false).toBe(false);
      const page = result.structuredContent as { items: { deliveryId: string }[]; nextCursor: string | null };
      const bytes = mcpLambdaBytes(result);
      (sizes.mcpLog ??= []).push(bytes);
      expect(bytes).toBeLessThanOrEqual(PAGE_RESPONSE_BUDGET_BYTES);
      seen.push(...page.items.map((d) => d.deliveryId));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== null && pages < 50);
    expect(pages).toBeGreaterThan(2);
    expect(cursor).toBeNull();
    expect(seen).toEqual([...medium.deliveryIds].reverse());
  }, 120_000);

  it('measures escaping: payloads of quotes and control characters end the page where their raw size would have fitted', async () => {
    const heavy = await endpointWith(40, () => ({ orderId: 'q', blob: '"\u0001'.repeat(20 * KIB) }));
    const rawPayloadBytes = 40 * Buffer.byteLength('"\u0001'.repeat(20 * KIB));
    expect(rawPayloadBytes).toBeLessThan(LAMBDA_SYNC_PAYLOAD_BYTES / 2);
    const res = await api.call('GET', `${ws()}/webhooks/${heavy.endpointId}/deliveries?limit=200`);
    expect(res.status).toBe(200);
    const bytes = restLambdaBytes(res.status, res.headers, res.text);
    (sizes.escaped ??= []).push(bytes);
    expect(bytes).toBeLessThanOrEqual(PAGE_RESPONSE_BUDGET_BYTES);
    expect(res.body.items.length).toBeLessThan(40);
    const rest = await api.call('GET', `${ws()}/webhooks/${heavy.endpointId}/deliveries?limit=200&cursor=${res.body.nextCursor}`);
    expect([...res.body.items, ...rest.body.items].map((d: { deliveryId: string }) => d.deliveryId)).toEqual(
      [...heavy.deliveryIds].reverse(),
    );
  }, 60_000);

  afterAll(() => {
    console.log('serialized Lambda response sizes (bytes):', JSON.stringify(sizes));
  });
});
