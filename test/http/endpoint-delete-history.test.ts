/**
 * Deleting an endpoint deletes its history, in the real local stack: an endpoint with thousands of
 * deliveries (seeded straight into the table, plus a real test send with its attempt) is deleted;
 * from the 204 on, no route, list, log or MCP tool shows any of its deliveries or attempts, another
 * endpoint's stay as they were, and the purge job on the jobs queue removes the rows.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { newHeldDelivery } from '../../lambdas/domain/delivery-lifecycle';
import { issueToken } from '../../lambdas/operations/admin';
import { getDeliveryItems, summaryItem } from '../../lambdas/store/deliveries';
import { batchWriteAll } from '../../lambdas/store/table-io';
import { endpointDeliveryPartitions } from '../../lambdas/store/table-schema';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { scriptedReceiver } from '../helpers/scripted-receiver';

const SEEDED = 2000;
const EVENTUALLY = { timeout: 60_000, interval: 100 };

let api: TestApi;
let mcpToken: string;
const ws = () => `/workspaces/${api.workspace}`;
const stops: (() => Promise<void>)[] = [];
beforeAll(async () => {
  api = await startTestApi({ timeScale: 1000, schedules: false, onPipelineError: () => undefined });
  mcpToken = (await issueToken(api.table, api.workspace, { name: 'mcp', scopes: ['admin'] })).token;
});
afterEach(async () => {
  await Promise.all(stops.splice(0).map((s) => s()));
});
afterAll(async () => {
  await api?.close();
});

async function mcp(
  name: string,
  args: Record<string, unknown>,
): Promise<{ isError?: boolean; structuredContent?: Record<string, unknown> }> {
  const res = await fetch(api.mcpUrl, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${mcpToken}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: { slug: api.workspace, ...args } } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { result: { isError?: boolean; structuredContent?: Record<string, unknown> } }).result;
}

/** Every delivery id the workspace log lists, page after page. */
async function logIds(query = ''): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | null = null;
  for (let page = 0; page < 500; page++) {
    const res: { status: number; body: { items: { deliveryId: string }[]; nextCursor: string | null } } = await api.call(
      'GET',
      `${ws()}/deliveries?limit=100${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    expect(res.status).toBe(200);
    for (const d of res.body.items) ids.add(d.deliveryId);
    cursor = res.body.nextCursor;
    if (!cursor) break;
  }
  return ids;
}

async function endpointWithTestSend(url: string): Promise<{ endpointId: string; testDeliveryId: string }> {
  const created = await api.call('POST', `${ws()}/webhooks`, { body: { url, eventTypes: ['order.shipped'] } });
  expect(created.status).toBe(201);
  const endpointId = created.body.endpointId as string;
  const sent = await api.call('POST', `${ws()}/webhooks/${endpointId}/test-event`);
  expect(sent.status).toBe(202);
  const testDeliveryId = sent.body.deliveryId as string;
  await vi.waitFor(async () => {
    const attempts = await api.call('GET', `${ws()}/webhooks/deliveries/${testDeliveryId}/attempts`);
    expect(attempts.body.items).toHaveLength(1);
  }, EVENTUALLY);
  return { endpointId, testDeliveryId };
}

async function seed(endpointId: string, count: number): Promise<string[]> {
  const at = new Date(Date.now() - 60_000);
  const records = Array.from({ length: count }, (_, i) =>
    newHeldDelivery({ workspace: api.workspace, endpointId, eventType: 'order.shipped', payload: { i, secret: 'history' } }, at),
  );
  await batchWriteAll(
    api.table,
    records.map((r) => ({ PutRequest: { Item: summaryItem(r) } })),
  );
  return records.map((r) => r.deliveryId);
}

describe('deleting an endpoint', () => {
  it('hides all of its deliveries and attempts from every route, list, log and tool at once, and its purge job removes them', async () => {
    const r = await scriptedReceiver((_req, res) => res.writeHead(200).end('ok'));
    stops.push(() => r.stop());
    const doomed = await endpointWithTestSend(r.url);
    const other = await endpointWithTestSend(r.url);
    const doomedIds = [...(await seed(doomed.endpointId, SEEDED)), doomed.testDeliveryId];
    const otherIds = [...(await seed(other.endpointId, 20)), other.testDeliveryId];

    // Before: readable.
    expect((await api.call('GET', `${ws()}/webhooks/deliveries/${doomedIds[0]}`)).status).toBe(200);
    expect((await api.call('GET', `${ws()}/webhooks/deliveries/${doomed.testDeliveryId}/attempts`)).body.items).toHaveLength(1);

    expect((await api.call('DELETE', `${ws()}/webhooks/${doomed.endpointId}`)).status).toBe(204);

    // After the 204: nothing of it on any route.
    for (const id of [doomed.testDeliveryId, doomedIds[0], doomedIds[SEEDED - 1]]) {
      const one = await api.call('GET', `${ws()}/webhooks/deliveries/${id}`);
      expect(one.status, `GET delivery ${id}`).toBe(404);
      expect(one.text).not.toContain('history');
      expect((await api.call('GET', `${ws()}/webhooks/deliveries/${id}/attempts`)).status).toBe(404);
      expect((await api.call('POST', `${ws()}/webhooks/deliveries/${id}/replay`)).status).toBe(404);
      expect((await mcp('get_webhook_delivery', { deliveryId: id })).isError).toBe(true);
      expect((await mcp('list_webhook_delivery_attempts', { deliveryId: id })).isError).toBe(true);
    }
    expect((await api.call('GET', `${ws()}/webhooks/${doomed.endpointId}/deliveries`)).status).toBe(404);
    expect((await api.call('GET', `${ws()}/deliveries?endpointId=${doomed.endpointId}`)).body.items).toEqual([]);
    const logged = await logIds();
    expect(doomedIds.filter((id) => logged.has(id))).toEqual([]);
    // Another endpoint's history is untouched.
    expect(otherIds.filter((id) => !logged.has(id))).toEqual([]);
    expect((await api.call('GET', `${ws()}/webhooks/deliveries/${other.testDeliveryId}/attempts`)).body.items).toHaveLength(1);
    const listed = await mcp('list_deliveries', { limit: 100 });
    expect(JSON.stringify(listed.structuredContent)).not.toContain(doomed.endpointId);

    // The purge job removes the rows and their index entries.
    await vi.waitFor(async () => {
      expect((await getDeliveryItems(api.table, doomedIds)).size).toBe(0);
      for (const p of endpointDeliveryPartitions(doomed.endpointId)) {
        const out = await api.table.doc.send(
          new QueryCommand({
            TableName: api.table.tableName,
            IndexName: p.index.name,
            KeyConditionExpression: '#pk = :pk',
            ExpressionAttributeNames: { '#pk': p.index.partitionKey },
            ExpressionAttributeValues: { ':pk': p.pk },
            Limit: 1,
          }),
        );
        expect(out.Items).toEqual([]);
      }
    }, EVENTUALLY);
    expect((await getDeliveryItems(api.table, otherIds)).size).toBe(otherIds.length);
  }, 180_000);
});
