/**
 * Payloads stored as they were sent (docs/behaviour.md#limits): any JSON value within the size and
 * depth limits, whatever its keys (`__proto__`, `constructor`, `toString`), depth or numbers, is
 * accepted by the real publisher against DynamoDB Local, stored, read back and delivered as the
 * same JSON value; a payload nested deeper than MAX_PAYLOAD_DEPTH is refused before any write, as a
 * problem on `POST /local/events` and, on the bus, logged and dropped (never a throw that
 * EventBridge would retry).
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PAYLOAD_DEPTH } from '../../lambdas/contract/limits';
import { createEventCatalogue } from '../../lambdas/domain/event-catalogue';
import { publishBusEvent, publishEvent, type PublishDeps } from '../../lambdas/pipeline/publisher';
import { getDelivery } from '../../lambdas/store/deliveries';
import { ENDPOINT_DELIVERY_SHARDS, keys, TABLE } from '../../lambdas/store/table-schema';
import { capturingQueue, seedEndpoint } from '../helpers/pipeline';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

/** Any JSON value is a valid `any.thing` payload; `order.shipped` wants an object with a string `orderId`. */
const catalogue = createEventCatalogue([
  { name: 'any.thing', description: 'any JSON', payloadSchema: {} },
  {
    name: 'order.shipped',
    description: 'test',
    payloadSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
  },
]);

/** `levels` arrays and objects inside one another (alternating, with `__proto__` keys), around `inner`. */
function nested(levels: number, inner = '"bottom"'): string {
  let text = inner;
  for (let i = 0; i < levels; i++) text = i % 2 ? `[${text}]` : `{"__proto__":${text}}`;
  return text;
}

/** Payloads as a producer's JSON text: the Lambda runtime hands the publisher `JSON.parse` of it. */
const ACCEPTED: [name: string, type: string, text: string][] = [
  ['a `constructor` key', 'order.shipped', '{"orderId":"o-1","constructor":{"name":"Order"}}'],
  ['a `__proto__` key', 'order.shipped', '{"orderId":"o-2","__proto__":{"isAdmin":true}}'],
  [
    '`toString`, `hasOwnProperty` and `valueOf` keys',
    'order.shipped',
    '{"orderId":"o-3","toString":"x","hasOwnProperty":null,"valueOf":[1]}',
  ],
  ['31 levels of nesting', 'any.thing', nested(31)],
  [`exactly ${MAX_PAYLOAD_DEPTH} levels of nesting`, 'any.thing', nested(MAX_PAYLOAD_DEPTH)],
  ['numbers beyond DynamoDB’s range', 'any.thing', '{"big":1e300,"tiny":5e-324,"neg":-1.7976931348623157e308}'],
  ['empty strings, objects and arrays', 'any.thing', '{"":"","e":{},"a":[],"n":[[],{}]}'],
  ['a lone surrogate and astral characters', 'any.thing', '{"s":"\\ud800 😀 \\u0000"}'],
  ['a bare string', 'any.thing', '"just text"'],
  ['null', 'any.thing', 'null'],
];

/** An endpoint's deliveries, as its shards of gsi2 count them. */
async function deliveryCount(endpointId: string): Promise<number> {
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

let n = 0;
async function subscribed() {
  const workspace = `payloads-${++n}`;
  const endpoint = await seedEndpoint(table, { workspace, url: 'https://hooks.example.com/x', eventTypes: ['any.thing', 'order.shipped'] });
  const deps: PublishDeps = { table, queue: capturingQueue(), eventTypes: catalogue, now: () => new Date() };
  return { workspace, endpoint, deps };
}

describe('the publisher stores any JSON payload as sent', () => {
  it.each(ACCEPTED)('accepts %s, and reads it back as the same JSON value', async (_name, type, text) => {
    const { workspace, deps } = await subscribed();
    const { deliveryIds } = await publishEvent(deps, { workspace, type, payload: JSON.parse(text) });
    expect(deliveryIds).toHaveLength(1);
    const row = await getDelivery(table, deliveryIds[0]!);
    // The same JSON text, key order included; and the same value, a `__proto__` key an own property.
    expect(JSON.stringify(row!.payload)).toBe(JSON.stringify(JSON.parse(text)));
    expect(row!.payload).toEqual(JSON.parse(text));
  });

  it('keeps a `__proto__` key an own property, never the read value’s prototype', async () => {
    const { workspace, deps } = await subscribed();
    const { deliveryIds } = await publishEvent(deps, {
      workspace,
      type: 'order.shipped',
      payload: JSON.parse('{"orderId":"o","__proto__":{"isAdmin":true}}'),
    });
    const payload = (await getDelivery(table, deliveryIds[0]!))!.payload as Record<string, unknown>;
    expect(Object.keys(payload)).toEqual(['orderId', '__proto__']);
    expect(Object.getPrototypeOf(payload)).toBe(Object.prototype);
    expect(payload.isAdmin).toBeUndefined();
  });

  it(`refuses a payload nested ${MAX_PAYLOAD_DEPTH + 1} levels deep, naming the limit, and writes nothing`, async () => {
    const { workspace, endpoint, deps } = await subscribed();
    const queue = capturingQueue();
    await expect(
      publishEvent({ ...deps, queue }, { workspace, type: 'any.thing', payload: JSON.parse(nested(MAX_PAYLOAD_DEPTH + 1)) }),
    ).rejects.toMatchObject({ tag: 'ValidationError', message: expect.stringContaining(`at most ${MAX_PAYLOAD_DEPTH} levels`) });
    expect(queue.sent).toHaveLength(0);
    expect(await deliveryCount(endpoint.endpointId)).toBe(0);
  });

  it('refuses a payload nested 100,000 levels deep (no stack overflow on the way)', async () => {
    const { workspace, endpoint, deps } = await subscribed();
    const payload = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)) as unknown;
    await expect(publishEvent(deps, { workspace, type: 'any.thing', payload })).rejects.toMatchObject({ tag: 'ValidationError' });
    expect(await deliveryCount(endpoint.endpointId)).toBe(0);
  });
});

describe('on the bus (the publisher function’s entry)', () => {
  function report() {
    const warnings: { message: string; attributes: Record<string, unknown> }[] = [];
    const counted: { key: string; value: number; dimensions: Record<string, string> }[] = [];
    return {
      warnings,
      counted,
      log: {
        debug: () => undefined,
        warn: (message: string, attributes: Record<string, unknown>) => warnings.push({ message, attributes }),
      },
      metrics: { add: (key: string, value: number, dimensions: Record<string, string>) => void counted.push({ key, value, dimensions }) },
    };
  }

  it('publishes an event whose payload has a `constructor` key (it used to fail every retry)', async () => {
    const { workspace, endpoint, deps } = await subscribed();
    const r = report();
    const payload = JSON.parse('{"orderId":"o","constructor":{"prototype":{}},"__proto__":[1]}') as unknown;
    const result = await publishBusEvent(deps, { id: `bus-${n}`, workspace, type: 'order.shipped', payload }, r);
    expect(result.deliveryIds).toHaveLength(1);
    expect(r.warnings).toEqual([]);
    expect((await getDelivery(table, result.deliveryIds[0]!))!.payload).toEqual(payload);
    expect(await deliveryCount(endpoint.endpointId)).toBe(1);
  });

  it('logs and drops an over-deep event instead of throwing (EventBridge would retry a throw)', async () => {
    const { workspace, endpoint, deps } = await subscribed();
    const r = report();
    const payload = JSON.parse(nested(MAX_PAYLOAD_DEPTH + 1)) as unknown;
    const result = await publishBusEvent(deps, { id: `deep-${n}`, workspace, type: 'any.thing', payload }, r);
    expect(result).toEqual({ deliveryIds: [], heldDeliveryIds: [], queued: true });
    expect(r.warnings).toEqual([
      {
        message: 'Refused an event',
        attributes: expect.objectContaining({ tag: 'ValidationError', detail: expect.stringContaining(String(MAX_PAYLOAD_DEPTH)) }),
      },
    ]);
    expect(r.counted.filter((c) => c.key === 'eventsRefused')).toEqual([
      { key: 'eventsRefused', value: 1, dimensions: { outcome: 'ValidationError' } },
    ]);
    expect(await deliveryCount(endpoint.endpointId)).toBe(0);
  });
});
