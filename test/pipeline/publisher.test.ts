/**
 * The publisher: fan-out to enabled subscribers, held rows for disabled ones, validation, size limit, nothing half-written,
 * and idempotence on the EventBridge event id (a redelivered or re-run event creates nothing new).
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { decodeTime } from 'ulid';
import type { EventBridgeEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { MAX_PAYLOAD_BYTES } from '../../lambdas/contract/limits';
import { publishEvent } from '../../lambdas/pipeline/publisher';
import { idPattern } from '../../lambdas/contract/ids';
import { eventDeliveryId } from '../../lambdas/domain/ids';
import { getDelivery, listAttempts, recordObservation } from '../../lambdas/store/deliveries';
import { listDeliveriesOfEndpoint } from '../../lambdas/store/delivery-log';
import { ENDPOINT_DELIVERY_SHARDS, INDEX_SHARDS, keys, shardOf, TABLE } from '../../lambdas/store/table-schema';
import { capturingQueue, seedEndpoint, testCatalogue } from '../helpers/pipeline';
import { freshTable } from '../helpers/table';
import { injectDynamoFaults } from '../faults/dynamo-faults';

/**
 * An event time `seconds` after a recent whole minute: deliveries carry a TTL of their creation
 * + 31 days, and DynamoDB Local removes expired items, so test events are never months old.
 */
const RECENT_MINUTE = Math.floor(Date.now() / 60_000) * 60_000 - 3600_000;
const recent = (seconds: number) => new Date(RECENT_MINUTE + seconds * 1000).toISOString();
let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

/** An endpoint's deliveries, as its shards of gsi2 (eventually consistent) count them. */
async function deliveryCount(endpointId: string) {
  let count = 0;
  for (let shard = 0; shard < ENDPOINT_DELIVERY_SHARDS; shard++) {
    const out = await table.doc.send(
      new QueryCommand({
        TableName: table.tableName,
        IndexName: TABLE.gsi2.name,
        KeyConditionExpression: 'gsi2pk = :p',
        ExpressionAttributeValues: { ':p': keys.endpointDeliveriesPk(endpointId, shard) },
        Select: 'COUNT',
      }),
    );
    count += out.Count ?? 0;
  }
  return count;
}

describe('publishEvent', () => {
  it('writes one pending row per enabled subscribed endpoint, then one message per row', async () => {
    const a = await seedEndpoint(table, { workspace: 'pub', url: 'https://a.example.com', eventTypes: ['order.shipped'] });
    const b = await seedEndpoint(table, {
      workspace: 'pub',
      url: 'https://b.example.com',
      eventTypes: ['order.shipped', 'webhook.test_event'],
    });
    const off = await seedEndpoint(table, {
      workspace: 'pub',
      url: 'https://c.example.com',
      eventTypes: ['order.shipped'],
      enabled: false,
    });
    const other = await seedEndpoint(table, { workspace: 'pub', url: 'https://d.example.com', eventTypes: ['webhook.test_event'] });
    const elsewhere = await seedEndpoint(table, { workspace: 'pub-2', url: 'https://e.example.com', eventTypes: ['order.shipped'] });
    const queue = capturingQueue();
    const { deliveryIds } = await publishEvent(
      { table, queue, eventTypes: testCatalogue, now: () => new Date() },
      { workspace: 'pub', type: 'order.shipped', payload: { orderId: 'o1' } },
    );
    expect(deliveryIds).toHaveLength(2);
    expect(queue.sent.map((m) => m.deliveryId).sort()).toEqual([...deliveryIds].sort());
    const rows = await Promise.all(deliveryIds.map((id) => getDelivery(table, id)));
    expect(rows.map((r) => r!.endpointId).sort()).toEqual([a.endpointId, b.endpointId].sort());
    for (const r of rows)
      expect(r).toMatchObject({
        status: 'pending',
        attempts: 0,
        eventType: 'order.shipped',
        payload: { orderId: 'o1' },
        replayedFrom: null,
      });
    for (const ep of [other, elsewhere]) expect(await deliveryCount(ep.endpointId)).toBe(0);
    // The disabled subscriber gets exactly its held row (below), never a queued one.
    expect(await deliveryCount(off.endpointId)).toBe(1);
  });

  it('holds the event for a disabled subscriber: a failed_permanent row, no attempt, nothing queued', async () => {
    const on = await seedEndpoint(table, { workspace: 'held', url: 'https://on.example.com', eventTypes: ['order.shipped'] });
    const off = await seedEndpoint(table, {
      workspace: 'held',
      url: 'https://off.example.com',
      eventTypes: ['order.shipped'],
      enabled: false,
    });
    const queue = capturingQueue();
    const result = await publishEvent(
      { table, queue, eventTypes: testCatalogue, now: () => new Date() },
      { workspace: 'held', type: 'order.shipped', payload: { orderId: 'h1' } },
    );
    expect(result.deliveryIds).toHaveLength(1);
    expect(result.heldDeliveryIds).toHaveLength(1);
    expect(queue.sent.map((m) => m.deliveryId)).toEqual(result.deliveryIds);
    const held = await getDelivery(table, result.heldDeliveryIds[0]!);
    expect(held).toMatchObject({
      endpointId: off.endpointId,
      status: 'failed_permanent',
      attempts: 0,
      lastError: 'endpoint_disabled',
      nextAttemptAt: null,
      eventType: 'order.shipped',
      payload: { orderId: 'h1' },
    });
    expect((await getDelivery(table, result.deliveryIds[0]!))?.endpointId).toBe(on.endpointId);
    // Listed with the endpoint's deliveries, but never a stuck-pending repair candidate.
    expect(await deliveryCount(off.endpointId)).toBe(1);
    const repair = await table.doc.send(
      new QueryCommand({
        TableName: table.tableName,
        IndexName: TABLE.gsi3.name,
        KeyConditionExpression: 'gsi3pk = :p',
        ExpressionAttributeValues: { ':p': keys.pendingShardPk(shardOf(held!.deliveryId, INDEX_SHARDS)) },
      }),
    );
    expect((repair.Items ?? []).map((i) => i.pk)).not.toContain(keys.delivery(held!.deliveryId).pk);
    // The pending one was sent, so it is no candidate either: the repair index holds only rows whose send failed.
    const pendingId = result.deliveryIds[0]!;
    const candidates = await table.doc.send(
      new QueryCommand({
        TableName: table.tableName,
        IndexName: TABLE.gsi3.name,
        KeyConditionExpression: 'gsi3pk = :p',
        ExpressionAttributeValues: { ':p': keys.pendingShardPk(shardOf(pendingId, INDEX_SHARDS)) },
      }),
    );
    expect((candidates.Items ?? []).map((i) => i.pk)).not.toContain(keys.delivery(pendingId).pk);
  });

  it('writes only held rows (and queues nothing) when every subscriber is disabled', async () => {
    const off = await seedEndpoint(table, {
      workspace: 'held-only',
      url: 'https://off.example.com',
      eventTypes: ['order.shipped'],
      enabled: false,
    });
    const queue = capturingQueue();
    const result = await publishEvent(
      { table, queue, eventTypes: testCatalogue, now: () => new Date() },
      { workspace: 'held-only', type: 'order.shipped', payload: { orderId: 'h2' } },
    );
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
    await expect(
      publishEvent({ table, queue, eventTypes: testCatalogue, now: () => new Date() }, { workspace: 'refuse', ...event }),
    ).rejects.toMatchObject({ tag });
    expect(queue.sent).toHaveLength(0);
    expect(await deliveryCount(ep.endpointId)).toBe(0);
  });

  it('refuses an unknown workspace', async () => {
    await expect(
      publishEvent(
        { table, queue: capturingQueue(), eventTypes: testCatalogue, now: () => new Date() },
        { workspace: 'nobody', type: 'order.shipped', payload: { orderId: 'x' } },
      ),
    ).rejects.toMatchObject({ tag: 'WorkspaceNotFound' });
  });
});

describe('idempotent publishing (EventBridge delivers an event at least once)', () => {
  const deps = (queue = capturingQueue(), now = new Date()) => ({ table, queue, eventTypes: testCatalogue, now: () => now });
  const at = recent(0);

  it('derives each delivery id from (event id, endpoint): whd_ + a ULID whose time part is the event time', async () => {
    const a = await seedEndpoint(table, { workspace: 'ids', url: 'https://a.example.com', eventTypes: ['order.shipped'] });
    const result = await publishEvent(deps(), {
      id: 'evt-ids-1',
      time: at,
      workspace: 'ids',
      type: 'order.shipped',
      payload: { orderId: 'i1' },
    });
    expect(result.deliveryIds).toEqual([eventDeliveryId('evt-ids-1', a.endpointId, new Date(at))]);
    const id = result.deliveryIds[0]!;
    expect(id).toMatch(idPattern('whd'));
    expect(decodeTime(id.slice(4))).toBe(Date.parse(at));
    expect(await getDelivery(table, id)).toMatchObject({ createdAt: new Date(at).toISOString(), status: 'pending' });
    // Another event, or another endpoint, gets another id.
    expect(eventDeliveryId('evt-ids-2', a.endpointId, new Date(at))).not.toBe(id);
    expect(eventDeliveryId('evt-ids-1', 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC', new Date(at))).not.toBe(id);
  });

  it('a redelivered event creates nothing new: same ids, no new rows, no message for a delivery already made', async () => {
    const a = await seedEndpoint(table, { workspace: 'redeliver', url: 'https://a.example.com', eventTypes: ['order.shipped'] });
    const b = await seedEndpoint(table, { workspace: 'redeliver', url: 'https://b.example.com', eventTypes: ['order.shipped'] });
    const off = await seedEndpoint(table, {
      workspace: 'redeliver',
      url: 'https://c.example.com',
      eventTypes: ['order.shipped'],
      enabled: false,
    });
    const event = { id: 'evt-redeliver', time: at, workspace: 'redeliver', type: 'order.shipped', payload: { orderId: 'r1' } };
    const first = await publishEvent(deps(), event);
    // The dispatcher delivers the first one before EventBridge redelivers the event, a minute later.
    const row = (await getDelivery(table, first.deliveryIds[0]!))!;
    await recordObservation(
      table,
      {
        delivery: row,
        endpoint: null,
        attempt: {
          outcome: 'delivered',
          timestamp: at,
          durationMs: 3,
          failureReason: null,
          requestHeaders: {},
          responseStatus: 204,
          responseBody: null,
        },
        status: 'delivered',
        http: true,
        nextAttemptAt: null,
        streak: 'none',
      },
      new Date(at),
    );
    const queue = capturingQueue();
    const again = await publishEvent(deps(queue, new Date(Date.parse(at) + 60_000)), event);
    expect(again).toEqual(first);
    for (const ep of [a, b, off]) expect(await deliveryCount(ep.endpointId)).toBe(1);
    // Only the one still pending is sent again (its first message may have been lost); the delivered one is untouched.
    expect(queue.sent).toEqual([{ deliveryId: first.deliveryIds[1], endpointId: b.endpointId, workspace: 'redeliver' }]);
    expect(await getDelivery(table, row.deliveryId)).toMatchObject({ status: 'delivered', attempts: 1, evidenceCount: 1 });
    expect((await listAttempts(table, row.deliveryId, 10)).items).toHaveLength(1);
    expect(await getDelivery(table, first.heldDeliveryIds[0]!)).toMatchObject({
      status: 'failed_permanent',
      lastError: 'endpoint_disabled',
    });
  });

  it('a re-run after a crash between the rows and the enqueue sends the messages, under the same ids', async () => {
    await seedEndpoint(table, { workspace: 'crash-enqueue', url: 'https://a.example.com', eventTypes: ['order.shipped'] });
    await seedEndpoint(table, { workspace: 'crash-enqueue', url: 'https://b.example.com', eventTypes: ['order.shipped'] });
    const event = { id: 'evt-crash-enqueue', time: at, workspace: 'crash-enqueue', type: 'order.shipped', payload: { orderId: 'c1' } };
    const lost = await publishEvent({ ...deps(), queue: { send: () => Promise.reject(new Error('container died')) } }, event);
    expect(lost.queued).toBe(false);
    const queue = capturingQueue();
    const retried = await publishEvent(deps(queue), event);
    expect(retried).toEqual({ ...lost, queued: true });
    expect(queue.sent.map((m) => m.deliveryId).sort()).toEqual([...lost.deliveryIds].sort());
  });

  it('a re-run after a crash halfway through the rows writes only the missing ones and never overwrites one that moved on', async () => {
    const eps: Awaited<ReturnType<typeof seedEndpoint>>[] = [];
    for (const n of [1, 2, 3, 4])
      eps.push(await seedEndpoint(table, { workspace: 'crash-rows', url: `https://h${n}.example.com`, eventTypes: ['order.shipped'] }));
    const event = { id: 'evt-crash-rows', time: at, workspace: 'crash-rows', type: 'order.shipped', payload: { orderId: 'p1' } };
    const faults = injectDynamoFaults(table.doc);
    let puts = 0;
    // The third row's write fails (a 500 from DynamoDB, or the container dying): the invocation fails.
    faults.fail({ command: 'PutItemCommand', when: () => ++puts === 3, times: 1, kind: '5xx' });
    const queue = capturingQueue();
    try {
      await expect(publishEvent(deps(queue), event)).rejects.toThrow(/injected server error/);
    } finally {
      faults.remove();
    }
    expect(queue.sent).toEqual([]);
    // Read by key (strongly consistent): the endpoint index may not show a row written a moment ago.
    const ids = eps.map((ep) => eventDeliveryId(event.id, ep.endpointId, new Date(at)));
    const rows = await Promise.all(ids.map((id) => getDelivery(table, id)));
    const written = rows.filter((r) => r !== null).length;
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(4);
    // Meanwhile one written row was dispatched (the stuck-pending repair found it): its evidence must survive the re-run.
    const moved = rows.find((r) => r !== null)!;
    await recordObservation(
      table,
      {
        delivery: moved,
        endpoint: null,
        attempt: {
          outcome: 'failed',
          timestamp: at,
          durationMs: 3,
          failureReason: 'http_503',
          requestHeaders: {},
          responseStatus: 503,
          responseBody: null,
        },
        status: 'failed',
        http: true,
        nextAttemptAt: at,
        streak: 'none',
      },
      new Date(at),
    );

    const retried = await publishEvent(deps(queue), event);
    expect(retried.deliveryIds.sort()).toEqual([...ids].sort());
    // One row per endpoint, as the (eventually consistent) endpoint index shows them.
    await vi.waitFor(async () => {
      for (const ep of eps) expect(await deliveryCount(ep.endpointId)).toBe(1);
    });
    // Every row still pending is (re-)sent; the one with evidence has its own retry message and is left alone.
    expect(queue.sent.map((m) => m.deliveryId).sort()).toEqual(ids.filter((id) => id !== moved.deliveryId).sort());
    expect(await getDelivery(table, moved.deliveryId)).toMatchObject({ status: 'failed', attempts: 1, evidenceCount: 1 });
  });

  it('the same event published twice at once still makes one row per endpoint', async () => {
    const eps = [];
    for (const n of [1, 2, 3])
      eps.push(await seedEndpoint(table, { workspace: 'twice', url: `https://t${n}.example.com`, eventTypes: ['order.shipped'] }));
    const event = { id: 'evt-twice', time: at, workspace: 'twice', type: 'order.shipped', payload: { orderId: 't1' } };
    const [x, y] = await Promise.all([publishEvent(deps(), event), publishEvent(deps(), event)]);
    expect(x.deliveryIds).toEqual(y.deliveryIds);
    for (const ep of eps) expect(await deliveryCount(ep.endpointId)).toBe(1);
  });

  it('distinct events are distinct deliveries, listed newest first by event time', async () => {
    const ep = await seedEndpoint(table, { workspace: 'order', url: 'https://o.example.com', eventTypes: ['order.shipped'] });
    const times = [recent(0), recent(1), recent(2)];
    // Published out of order (a retry can arrive after a later event): the list still follows the event times.
    for (const i of [2, 0, 1])
      await publishEvent(deps(), {
        id: `evt-order-${i}`,
        time: times[i]!,
        workspace: 'order',
        type: 'order.shipped',
        payload: { orderId: `o${i}` },
      });
    const page = await listDeliveriesOfEndpoint(table, ep.endpointId, 10);
    expect(page.items.map((d) => (d.payload as { orderId: string }).orderId)).toEqual(['o2', 'o1', 'o0']);
  });
});

describe('the Lambda entry (EventBridge target)', () => {
  // EventBridge invokes at least once: the entry passes the bus event's id and time, so a
  // redelivery maps to the deliveries the first invocation made.
  it('passes the EventBridge id and time: a redelivered bus event maps to the same deliveries', async () => {
    const env = { ...process.env };
    const queue = capturingQueue();
    const { useAdapters, awsAdapters } = await import('../../lambdas/composition/runtime');
    Object.assign(process.env, {
      TABLE_NAME: table.tableName,
      DYNAMODB_ENDPOINT: inject('dynamoDbEndpoint'),
      DELIVERY_QUEUE_URL: 'test:deliveries',
    });
    useAdapters({ ...awsAdapters, deliveryQueue: () => queue });
    try {
      const ep = await seedEndpoint(table, { workspace: 'bus', url: 'https://bus.example.com', eventTypes: ['order.shipped'] });
      const { handler } = await import('../../lambdas/functions/publisher');
      const event = {
        id: '7bf73129-1428-4cd3-a780-95db273d1602',
        version: '0',
        account: '123456789012',
        time: recent(0),
        region: 'eu-west-1',
        resources: [],
        source: 'orders',
        'detail-type': 'order.shipped',
        detail: { workspace: 'bus', payload: { orderId: 'bus-1' } },
      } satisfies EventBridgeEvent<string, unknown>;
      const first = await handler(event);
      const again = await handler(event);
      expect(again.deliveryIds).toEqual(first.deliveryIds);
      expect(first.deliveryIds).toEqual([eventDeliveryId(event.id, ep.endpointId, new Date(event.time))]);
      expect(await deliveryCount(ep.endpointId)).toBe(1);
    } finally {
      useAdapters(awsAdapters);
      process.env = env;
    }
  });
});
