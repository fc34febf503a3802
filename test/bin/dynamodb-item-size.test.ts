/**
 * DynamoDB's item limits (docs/behaviour.md#limits): DynamoDB Local refuses an item over 400 KB
 * counted as DynamoDB counts (attribute names included) and nesting past 32 levels, exactly there;
 * and the largest item of each kind the service writes stays under 400 KB because of the code's
 * own limits (the largest event payload, the response-body cap, the input bounds).
 */
import { randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { createTableContext, type TableContext } from '#lambdas/composition/tools';
import { DYNAMODB_ITEM_BYTES, DYNAMODB_MAX_NESTING_LEVELS, EVENTBRIDGE_DETAIL_TYPE_MAX_CHARS } from '../../lambdas/contract/aws-limits';
import { MAX_PAYLOAD_BYTES, SEND_LIMITS, USER_AGENT, WORKSPACE_SLUG_MAX_CHARS } from '../../lambdas/contract/limits';
import { newPendingDelivery } from '../../lambdas/domain/delivery-lifecycle';
import { auditPut } from '../../lambdas/store/audit';
import { stateItem, summaryItem } from '../../lambdas/store/deliveries';
import { keys, TABLE } from '../../lambdas/store/table-schema';
import { ensureTable } from '../../bin/local/create-table';

/**
 * The size of a stored item as DynamoDB counts it ("Item sizes and formats"): per attribute its
 * name's UTF-8 bytes plus its value: a string's UTF-8 bytes, a number's 1 byte per two significant
 * digits plus 1 (plus 1 if negative, as DynamoDB Local counts), a binary's length, a boolean or null 1 byte, a list or map 3 bytes plus each
 * element's size (a map's with its name) plus 1 byte per element.
 */
function itemBytes(item: Record<string, unknown>): number {
  const utf8 = (s: string) => Buffer.byteLength(s, 'utf8');
  const value = (v: unknown): number => {
    if (typeof v === 'string') return utf8(v);
    if (typeof v === 'number') {
      const digits = String(Math.abs(v)).replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
      return Math.ceil(Math.max(digits.length, 1) / 2) + 1 + (v < 0 ? 1 : 0);
    }
    if (typeof v === 'boolean' || v === null) return 1;
    if (v instanceof Uint8Array) return v.length;
    if (Array.isArray(v)) return 3 + v.reduce((n: number, e) => n + value(e) + 1, 0);
    if (typeof v === 'object') return 3 + entries(v as Record<string, unknown>).reduce((n, [k, e]) => n + utf8(k) + value(e) + 1, 0);
    throw new Error(`unsized attribute value of type ${typeof v}`);
  };
  // Undefined attributes are not written (the table client removes them).
  const entries = (o: Record<string, unknown>) => Object.entries(o).filter(([, v]) => v !== undefined);
  return entries(item).reduce((n, [name, v]) => n + utf8(name) + value(v), 0);
}

let table: TableContext;
beforeAll(async () => {
  table = createTableContext({ tableName: `t-${randomUUID()}`, endpoint: inject('dynamoDbEndpoint') });
  await ensureTable(table);
}, 60_000);
afterAll(() => table.doc.destroy());

const put = (item: Record<string, unknown>) => table.doc.send(new PutCommand({ TableName: table.tableName, Item: item }));
/** An item of exactly `bytes`, its `blob` filling what `base` leaves. */
const sized = (base: Record<string, unknown>, bytes: number) => {
  const item = { ...base, blob: '' };
  const filled = { ...item, blob: 'x'.repeat(bytes - itemBytes(item)) };
  expect(itemBytes(filled)).toBe(bytes);
  return filled;
};

describe('DynamoDB Local refuses where DynamoDB does', () => {
  it('an item of exactly 400 KB, attribute names included, is stored; one byte more is refused', async () => {
    const base = { pk: `limit#${randomUUID()}`, sk: 'flat', 'a-long-attribute-name': 'é' };
    await put(sized(base, DYNAMODB_ITEM_BYTES));
    await expect(put(sized(base, DYNAMODB_ITEM_BYTES + 1))).rejects.toMatchObject({
      name: 'ValidationException',
      message: expect.stringMatching(/item size has exceeded the maximum allowed size/i),
    });
  });

  it('maps, lists, numbers, booleans and nulls count as this test counts them: the boundary holds for a nested item', async () => {
    const base = {
      pk: `limit#${randomUUID()}`,
      sk: 'nested',
      m: { a: [1, 12345, -0.5, true, null, 'é'], b: { c: {} } },
      n: 12_345_678_901,
    };
    await put(sized(base, DYNAMODB_ITEM_BYTES));
    await expect(put(sized(base, DYNAMODB_ITEM_BYTES + 1))).rejects.toMatchObject({ name: 'ValidationException' });
  });

  it(`a document path ${DYNAMODB_MAX_NESTING_LEVELS} levels deep (the top-level attribute the first) is stored; one level more is refused`, async () => {
    // `v` holding `levels - 1` nested maps and lists: its deepest path (v.m[0].m…) is `levels` long.
    const nest = (containers: number): unknown =>
      containers === 0 ? 'leaf' : containers % 2 ? { m: nest(containers - 1) } : [nest(containers - 1)];
    await put({ pk: `depth#${randomUUID()}`, sk: 'x', v: nest(DYNAMODB_MAX_NESTING_LEVELS - 1) });
    await expect(put({ pk: `depth#${randomUUID()}`, sk: 'x', v: nest(DYNAMODB_MAX_NESTING_LEVELS) })).rejects.toMatchObject({
      name: 'ValidationException',
      message: expect.stringMatching(/nested levels beyond supported limit/),
    });
  });
});

describe('the largest item of each kind fits', () => {
  const slug = 'w'.repeat(WORKSPACE_SLUG_MAX_CHARS);
  const eventType = `${'t'.repeat(EVENTBRIDGE_DETAIL_TYPE_MAX_CHARS - 2)}.x`;
  /** Payloads of exactly MAX_PAYLOAD_BYTES of JSON: one long string, and the shape DynamoDB stores largest (empty lists: 3 JSON bytes, 4 stored). */
  const payloads = {
    string: { blob: 'x'.repeat(MAX_PAYLOAD_BYTES - JSON.stringify({ blob: '' }).length) },
    'empty lists': (() => {
      const n = Math.floor((MAX_PAYLOAD_BYTES - 100) / 3);
      const value: Record<string, unknown> = { l: Array.from({ length: n }, () => []) };
      value.p = 'x'.repeat(MAX_PAYLOAD_BYTES - JSON.stringify({ ...value, p: '' }).length);
      expect(JSON.stringify(value).length).toBe(MAX_PAYLOAD_BYTES);
      return value;
    })(),
  };

  for (const [shape, payload] of Object.entries(payloads)) {
    it(`a delivery summary with a payload of MAX_PAYLOAD_BYTES (${shape}) is under 400 KB and DynamoDB Local stores it`, async () => {
      const record = newPendingDelivery(
        {
          workspace: slug,
          endpointId: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC',
          eventType,
          payload,
          replayedFrom: 'whd_01JD2Y9P0R6S8T1V3W5X7Y9ZAB',
        },
        new Date(),
      );
      const item = summaryItem(record);
      expect(itemBytes(item)).toBeLessThan(DYNAMODB_ITEM_BYTES);
      await put(item);
    });
  }

  it('an attempt with the largest evidence (response body at its cap, every header) is far under 400 KB, in its own item and inside the state', async () => {
    const deliveryId = `whd_${randomUUID().replace(/-/g, '').slice(0, 26).toUpperCase()}`;
    const attempt = {
      ordinal: 1,
      outcome: 'failed',
      timestamp: new Date().toISOString(),
      durationMs: SEND_LIMITS.deadlineMs,
      failureReason: 'x'.repeat(200),
      requestHeaders: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'webhook-id': deliveryId,
        'webhook-timestamp': '1795608300',
        // Two signatures during a rotation's grace period.
        'webhook-signature': `v1,${'s'.repeat(44)} v1,${'s'.repeat(44)}`,
        'x-trace-id': randomUUID(),
      },
      responseStatus: 503,
      // The body is read as a bounded prefix: at most the cap in bytes, stored as text.
      responseBody: '€'.repeat(Math.floor(SEND_LIMITS.bodyCapBytes / 3)),
    };
    const own = {
      ...keys.attempt(deliveryId, 1),
      type: 'attempt',
      deliveryId,
      ...attempt,
      applies: { status: 'failed', http: true, nextAttemptAt: null, streak: 'failure' },
      [TABLE.ttlAttribute]: 1_800_000_000,
    };
    expect(itemBytes(own)).toBeLessThan(DYNAMODB_ITEM_BYTES / 50);
    await put(own);
    const record = newPendingDelivery(
      { workspace: slug, endpointId: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC', eventType, payload: {}, replayedFrom: null },
      new Date(),
    );
    const state = { ...stateItem({ ...record, lastError: attempt.failureReason, lastResponseStatus: 503 }), firstAttempt: attempt };
    expect(itemBytes(state)).toBeLessThan(DYNAMODB_ITEM_BYTES / 50);
    await put(state);
  });

  /** The largest inputs an endpoint accepts (docs/api-guide.md): 100 event types, a 2,048-character URL, a 500-character description. */
  const largestEndpoint = {
    url: `https://${'h'.repeat(2048 - 'https://'.length)}`,
    description: 'd'.repeat(500),
    eventTypes: Array.from(
      { length: 100 },
      (_, i) => `${'t'.repeat(EVENTBRIDGE_DETAIL_TYPE_MAX_CHARS - 6)}.t${String(i).padStart(3, '0')}`,
    ),
  };

  it('an endpoint with the most and longest event types, URL and description is far under 400 KB', async () => {
    const item = {
      ...keys.endpoint(slug, 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC'),
      type: 'endpoint',
      workspace: slug,
      endpointId: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC',
      ...largestEndpoint,
      enabled: true,
      // Two sealed secrets during a rotation's grace period (envelope-encrypted, a few hundred bytes each).
      secrets: [{ sealed: 's'.repeat(1024) }, { sealed: 's'.repeat(1024) }],
      createdAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
    };
    expect(itemBytes(item)).toBeLessThan(DYNAMODB_ITEM_BYTES / 10);
    await put(item);
  });

  it('an audit entry recording the largest endpoint change is far under 400 KB', async () => {
    const { Put } = auditPut(
      table,
      slug,
      {
        action: 'endpoint.updated',
        actor: 'tok_01JD2Y8M7K3V9Q4T6W1X5Z0ABC',
        targetId: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC',
        detail: { before: largestEndpoint, after: largestEndpoint },
      },
      new Date(),
    );
    expect(itemBytes(Put.Item)).toBeLessThan(DYNAMODB_ITEM_BYTES / 5);
    await put(Put.Item);
  });
});
