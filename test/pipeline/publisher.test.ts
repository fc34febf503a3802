/** The publisher: fan-out to enabled subscribers, held rows for disabled ones, validation, size limit, nothing half-written. */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PAYLOAD_BYTES } from '../../lambdas/contract/limits';
import { publishEvent } from '../../lambdas/pipeline/publisher';
import { getDelivery } from '../../lambdas/store/deliveries';
import { keys, TABLE } from '../../lambdas/store/table-schema';
import { capturingQueue, seedEndpoint, testCatalogue } from '../helpers/pipeline';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

async function deliveryCount(endpointId: string) {
  const out = await table.doc.send(
    new QueryCommand({ TableName: table.tableName, IndexName: TABLE.gsi1.name, KeyConditionExpression: 'gsi1pk = :p', ExpressionAttributeValues: { ':p': `EP#${endpointId}` }, Select: 'COUNT' }),
  );
  return out.Count ?? 0;
}

describe('publishEvent', () => {
  it('writes one pending row per enabled subscribed endpoint, then one message per row', async () => {
    const a = await seedEndpoint(table, { workspace: 'pub', url: 'https://a.example.com', eventTypes: ['order.shipped'] });
    const b = await seedEndpoint(table, { workspace: 'pub', url: 'https://b.example.com', eventTypes: ['order.shipped', 'webhook.test_event'] });
    const off = await seedEndpoint(table, { workspace: 'pub', url: 'https://c.example.com', eventTypes: ['order.shipped'], enabled: false });
    const other = await seedEndpoint(table, { workspace: 'pub', url: 'https://d.example.com', eventTypes: ['webhook.test_event'] });
    const elsewhere = await seedEndpoint(table, { workspace: 'pub-2', url: 'https://e.example.com', eventTypes: ['order.shipped'] });
    const queue = capturingQueue();
    const { deliveryIds } = await publishEvent({ table, queue, eventTypes: testCatalogue, now: () => new Date() }, { workspace: 'pub', type: 'order.shipped', payload: { orderId: 'o1' } });
    expect(deliveryIds).toHaveLength(2);
    expect(queue.sent.map((m) => m.deliveryId).sort()).toEqual([...deliveryIds].sort());
    const rows = await Promise.all(deliveryIds.map((id) => getDelivery(table, id)));
    expect(rows.map((r) => r!.endpointId).sort()).toEqual([a.endpointId, b.endpointId].sort());
    for (const r of rows) expect(r).toMatchObject({ status: 'pending', attempts: 0, eventType: 'order.shipped', payload: { orderId: 'o1' }, replayedFrom: null });
    for (const ep of [other, elsewhere]) expect(await deliveryCount(ep.endpointId)).toBe(0);
    // The disabled subscriber gets exactly its held row (below), never a queued one.
    expect(await deliveryCount(off.endpointId)).toBe(1);
  });

  it('holds the event for a disabled subscriber: a failed_permanent row, no attempt, nothing queued', async () => {
    const on = await seedEndpoint(table, { workspace: 'held', url: 'https://on.example.com', eventTypes: ['order.shipped'] });
    const off = await seedEndpoint(table, { workspace: 'held', url: 'https://off.example.com', eventTypes: ['order.shipped'], enabled: false });
    const queue = capturingQueue();
    const result = await publishEvent({ table, queue, eventTypes: testCatalogue, now: () => new Date() }, { workspace: 'held', type: 'order.shipped', payload: { orderId: 'h1' } });
    expect(result.deliveryIds).toHaveLength(1);
    expect(result.heldDeliveryIds).toHaveLength(1);
    expect(queue.sent.map((m) => m.deliveryId)).toEqual(result.deliveryIds);
    const held = await getDelivery(table, result.heldDeliveryIds[0]!);
    expect(held).toMatchObject({ endpointId: off.endpointId, status: 'failed_permanent', attempts: 0, lastError: 'endpoint_disabled', nextAttemptAt: null, eventType: 'order.shipped', payload: { orderId: 'h1' } });
    expect((await getDelivery(table, result.deliveryIds[0]!))?.endpointId).toBe(on.endpointId);
    // Listed with the endpoint's deliveries, but never a stuck-pending repair candidate.
    expect(await deliveryCount(off.endpointId)).toBe(1);
    const repair = await table.doc.send(
      new QueryCommand({ TableName: table.tableName, IndexName: TABLE.gsi3.name, KeyConditionExpression: 'gsi3pk = :p', ExpressionAttributeValues: { ':p': keys.pendingHour(held!.createdAt) } }),
    );
    expect((repair.Items ?? []).map((i) => i.pk)).not.toContain(keys.delivery(held!.deliveryId).pk);
  });

  it('writes only held rows (and queues nothing) when every subscriber is disabled', async () => {
    const off = await seedEndpoint(table, { workspace: 'held-only', url: 'https://off.example.com', eventTypes: ['order.shipped'], enabled: false });
    const queue = capturingQueue();
    const result = await publishEvent({ table, queue, eventTypes: testCatalogue, now: () => new Date() }, { workspace: 'held-only', type: 'order.shipped', payload: { orderId: 'h2' } });
    expect(result).toMatchObject({ deliveryIds: [], queued: true });
    expect(result.heldDeliveryIds).toHaveLength(1);
    expect(queue.sent).toHaveLength(0);
    expect(await deliveryCount(off.endpointId)).toBe(1);
  });

  it.each([
    ['an unknown type', { type: 'order.lost', payload: {} }, 'UnknownEventType'],
    ['an invalid payload', { type: 'order.shipped', payload: { orderId: 7 } }, 'ValidationError'],
    ['an oversized payload', { type: 'order.shipped', payload: { orderId: 'x', blob: 'x'.repeat(MAX_PAYLOAD_BYTES) } }, 'PayloadTooLarge'],
  ])('refuses %s with a clear error and writes nothing', async (_name, event, tag) => {
    const ep = await seedEndpoint(table, { workspace: 'refuse', url: 'https://a.example.com', eventTypes: ['order.shipped'] });
    const queue = capturingQueue();
    await expect(publishEvent({ table, queue, eventTypes: testCatalogue, now: () => new Date() }, { workspace: 'refuse', ...event })).rejects.toMatchObject({ tag });
    expect(queue.sent).toHaveLength(0);
    expect(await deliveryCount(ep.endpointId)).toBe(0);
  });

  it('refuses an unknown workspace', async () => {
    await expect(publishEvent({ table, queue: capturingQueue(), eventTypes: testCatalogue, now: () => new Date() }, { workspace: 'nobody', type: 'order.shipped', payload: { orderId: 'x' } })).rejects.toMatchObject({ tag: 'WorkspaceNotFound' });
  });
});
