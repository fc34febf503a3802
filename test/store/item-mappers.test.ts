/**
 * Typed item mappers on DynamoDB Local: an item written by the store reads back as written, an
 * attribute that may be absent reads as null, and an item of another shape fails with an
 * `ItemShapeError` naming the attribute (or the missing sealed value of a secret) instead of flowing on with a wrong value.
 * A delivery summary keeps its payload as JSON text (no larger than the map it replaces for typical
 * payloads), and a summary holding it as a map still reads.
 */
import { deflateRawSync } from 'node:zlib';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newPendingDelivery, type DeliveryRecord } from '../../lambdas/domain/delivery-lifecycle';
import { newRecoveryJob, recoveryWindow } from '../../lambdas/domain/recovery';
import { getDelivery, putPendingDeliveries, summaryItem, toDeliveryWire } from '../../lambdas/store/deliveries';
import { listDeliveriesOfEndpoint } from '../../lambdas/store/delivery-log';
import { getEndpointRecord } from '../../lambdas/store/endpoints';
import { claimIdempotencyKey } from '../../lambdas/store/idempotency-records';
import { listNotifications, putNotification } from '../../lambdas/store/notifications';
import { createRecoveryJob, getJobRecord } from '../../lambdas/store/recovery-jobs';
import { ItemShapeError } from '../../lambdas/store/table-io';
import { keys } from '../../lambdas/store/table-schema';
import { SEEDED_SECRET, seedEndpoint } from '../helpers/pipeline';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

const NOW = new Date();

describe('item mappers', () => {
  it('read a recovery job back as written, and name the attribute of a job item of another shape', async () => {
    const window = recoveryWindow({ since: new Date(NOW.getTime() - 3600_000).toISOString(), statuses: ['failed'] }, NOW);
    const count = { matched: 3, matchedAtLeast: false, skippedReplayed: 0 };
    const actor = { kind: 'token', id: 'tok_1', name: 'ops bot' } as const;
    const job = newRecoveryJob({ workspace: 'acme', endpointId: 'ep_1', actor, count, window }, NOW);
    expect(await createRecoveryJob(table, job, NOW, 1)).toBe('created');
    expect(await getJobRecord(table, job.jobId)).toEqual(job);

    const set = (name: string, value: unknown) =>
      table.doc.send(
        new UpdateCommand({
          TableName: table.tableName,
          Key: keys.job(job.jobId),
          UpdateExpression: 'SET #a = :v',
          ExpressionAttributeNames: { '#a': name },
          ExpressionAttributeValues: { ':v': value },
        }),
      );
    await set('statuses', ['failed', 'pending']);
    await expect(getJobRecord(table, job.jobId)).rejects.toThrow(ItemShapeError);
    await expect(getJobRecord(table, job.jobId)).rejects.toThrow(/statuses is not a list of failed, failed_permanent, dead_lettered/);
    await set('statuses', ['failed']);
    await set('status', 'paused');
    await expect(getJobRecord(table, job.jobId)).rejects.toThrow(/status is not one of running, completed, cancelled, failed/);
  });

  it('read a notification without endpoint or delivery as null for both, and refuse one whose kind is not a string', async () => {
    const written = await putNotification(table, 'notes', { kind: 'endpoint.disabled', message: 'm', endpointId: 'ep_1' }, NOW);
    const key = keys.notification('notes', written.notificationId);
    const stored = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: key }));
    const { endpointId: _e, deliveryId: _d, ...rest } = stored.Item ?? {};
    await table.doc.send(new PutCommand({ TableName: table.tableName, Item: rest }));
    expect((await listNotifications(table, 'notes', 10)).items).toEqual([{ ...written, endpointId: null, deliveryId: null }]);

    await table.doc.send(new PutCommand({ TableName: table.tableName, Item: { ...rest, kind: 7 } }));
    await expect(listNotifications(table, 'notes', 10)).rejects.toThrow(/kind is not a string/);
  });

  it('read an endpoint’s sealed secrets back as written, and refuse a secret without a sealed value', async () => {
    const endpoint = await seedEndpoint(table, { workspace: 'sealed', url: 'https://hooks.example.com/x' }, NOW);
    expect((await getEndpointRecord(table, 'sealed', endpoint.endpointId))!.secrets).toEqual(endpoint.secrets);
    await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: keys.endpoint('sealed', endpoint.endpointId),
        UpdateExpression: 'SET secrets = :s',
        ExpressionAttributeValues: { ':s': [{ secret: SEEDED_SECRET, createdAt: NOW.toISOString(), expiresAt: null }] },
      }),
    );
    await expect(getEndpointRecord(table, 'sealed', endpoint.endpointId)).rejects.toThrow(ItemShapeError);
    await expect(getEndpointRecord(table, 'sealed', endpoint.endpointId)).rejects.toThrow(/a secret has no sealed value/);
  });

  it('refuse an idempotency record whose stored response is not a status and a body', async () => {
    const claim = { tokenId: 'tok_M', key: 'k', fingerprint: 'fp', now: NOW, ttlSeconds: 3600, lockSeconds: 30 };
    expect(await claimIdempotencyKey(table, claim)).toEqual({ kind: 'claimed' });
    await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: keys.idempotency('tok_M', 'k'),
        UpdateExpression: 'SET #s = :c, #r = :r',
        ExpressionAttributeNames: { '#s': 'status', '#r': 'response' },
        ExpressionAttributeValues: { ':c': 'completed', ':r': { statusCode: '201', body: '{}' } },
      }),
    );
    await expect(claimIdempotencyKey(table, claim)).rejects.toThrow(/statusCode is not a number/);
  });
});

/**
 * The size DynamoDB bills for a value of a document-client item: strings in UTF-8 bytes, numbers
 * one byte per two significant digits plus one, booleans and null one byte, lists and maps 3 bytes
 * plus one byte per element (and a map entry's name), binary its length.
 */
function valueBytes(v: unknown): number {
  if (typeof v === 'string') return Buffer.byteLength(v);
  if (v instanceof Uint8Array) return v.length;
  if (typeof v === 'number')
    return (
      Math.ceil(
        String(Math.abs(v))
          .replace(/e.*$|\./g, '')
          .replace(/^0+|0+$/g, '').length / 2,
      ) + 1
    );
  if (v === null || typeof v === 'boolean') return 1;
  if (Array.isArray(v)) return 3 + v.reduce((sum: number, x) => sum + 1 + valueBytes(x), 0);
  return 3 + Object.entries(v as object).reduce((sum, [k, x]) => sum + Buffer.byteLength(k) + 1 + valueBytes(x), 0);
}
const itemBytes = (item: Record<string, unknown>) =>
  Object.entries(item).reduce((sum, [k, x]) => (x === undefined ? sum : sum + Buffer.byteLength(k) + valueBytes(x)), 0);

/** Typical payloads: the test event, a small custom event, two nested ones of about 0.8 and 2.7 KB. */
const TYPICAL: Record<string, unknown> = {
  'test event': {
    message: 'This is a test event from the webhook delivery service.',
    sentAt: NOW.toISOString(),
    endpointId: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC',
  },
  'order.shipped': { orderId: 'ord_8Fh2kQ', carrier: 'UPS', trackingNumber: '1Z999AA10123456784' },
  'invoice, 4 lines': {
    id: 'in_1Q2w3E4r5T6y7U8i',
    customer: {
      id: 'cus_9o0P1a2S3d',
      email: 'billing@acme.test',
      name: 'Acme Corp',
      address: { city: 'Berlin', country: 'DE', postalCode: '10115' },
    },
    amountDue: 129900,
    amountPaid: 0,
    currency: 'eur',
    status: 'open',
    dueDate: '2026-12-27T00:00:00.000Z',
    lines: Array.from({ length: 4 }, (_, i) => ({
      id: `il_${i}abcdefgh`,
      description: `Seat licence ${i}`,
      quantity: i + 1,
      unitAmount: 32475,
      taxRates: ['txr_19'],
    })),
    metadata: { orderRef: 'PO-2026-0042', region: 'eu-central' },
  },
  'order batch, 30 lines': {
    batch: 'b_2026_11_27',
    orders: Array.from({ length: 30 }, (_, i) => ({
      orderId: `ord_${1000 + i}`,
      sku: `SKU-${i}-XL`,
      qty: i % 5,
      price: 1999 + i,
      shipped: i % 2 === 0,
      note: null,
    })),
  },
};

describe('delivery summaries', () => {
  const record = (payload: unknown): DeliveryRecord =>
    newPendingDelivery({ workspace: 'payloads', endpointId: 'whe_payloads', eventType: 'order.shipped', payload }, NOW);

  it('store the payload as JSON text (deflated when that is smaller), and read a summary holding it as a map (as older versions wrote it)', async () => {
    const small = { orderId: 'o-1', lines: [{ sku: 'a', qty: 2 }], gift: false, note: null };
    const large = TYPICAL['order batch, 30 lines'];
    const [plain, deflated] = [record(small), record(large)];
    expect(summaryItem(plain)).toMatchObject({ payloadJson: JSON.stringify(small) });
    expect(summaryItem(deflated).payloadJsonDeflated).toEqual(new Uint8Array(deflateRawSync(JSON.stringify(large))));
    for (const item of [summaryItem(plain), summaryItem(deflated)]) expect(item).not.toHaveProperty('payload');
    await putPendingDeliveries(table, [plain, deflated]);
    expect((await getDelivery(table, plain.deliveryId))!.payload).toEqual(small);
    expect(JSON.stringify((await getDelivery(table, deflated.deliveryId))!.payload)).toBe(JSON.stringify(large));

    const old = record(small);
    const { payloadJson: _text, ...mapForm } = summaryItem(old);
    await table.doc.send(new PutCommand({ TableName: table.tableName, Item: { ...mapForm, payload: small } }));
    const read = await getDelivery(table, old.deliveryId);
    expect(read!.payload).toEqual(small);
    expect(toDeliveryWire(read!).payload).toEqual(small);
    const listed = await listDeliveriesOfEndpoint(table, 'whe_payloads', 10);
    expect(new Map(listed.items.map((d) => [d.deliveryId, d.payload]))).toEqual(
      new Map([
        [plain.deliveryId, small],
        [deflated.deliveryId, large],
        [old.deliveryId, small],
      ]),
    );
  });

  it('refuse a summary whose payload text is not a string, or whose deflated text is not binary', async () => {
    const bad = record({ a: 1 });
    await table.doc.send(new PutCommand({ TableName: table.tableName, Item: { ...summaryItem(bad), payloadJson: 7 } }));
    await expect(getDelivery(table, bad.deliveryId)).rejects.toThrow(/payloadJson is not a string/);
    const { payloadJson: _text, ...rest } = summaryItem(bad);
    await table.doc.send(new PutCommand({ TableName: table.tableName, Item: { ...rest, payloadJsonDeflated: 'x' } }));
    await expect(getDelivery(table, bad.deliveryId)).rejects.toThrow(/payloadJsonDeflated is not binary/);
  });

  it('cost no more write units as text than as a map, for typical payloads', () => {
    const rows: string[] = [];
    for (const [name, payload] of Object.entries(TYPICAL)) {
      const { payloadJson: _plain, payloadJsonDeflated: _deflated, ...rest } = summaryItem(record(payload));
      const [text, map] = [itemBytes(summaryItem(record(payload))), itemBytes({ ...rest, payload })];
      const [wcuText, wcuMap] = [Math.ceil(text / 1024), Math.ceil(map / 1024)];
      rows.push(
        `${name}: payload ${JSON.stringify(payload).length} B of JSON; summary ${map} B as a map (${wcuMap} WCU), ${text} B as text (${wcuText} WCU)`,
      );
      expect(wcuText, name).toBeLessThanOrEqual(wcuMap);
    }
    console.log(`delivery summary sizes:\n  ${rows.join('\n  ')}`);
  });
});
