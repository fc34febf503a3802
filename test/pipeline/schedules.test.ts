/** The scheduled jobs against DynamoDB Local: retention bounds, grace expiry, stuck-pending repair. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../lambdas/domain/ids';
import { openSecrets, SECRET_GRACE_MS } from '../../lambdas/domain/secrets';
import { runPendingRepair, runRetention, runSecretExpiry } from '../../lambdas/pipeline/schedules';
import { publishEvent } from '../../lambdas/pipeline/publisher';
import type { DeliveryRecord } from '../../lambdas/domain/delivery-lifecycle';
import { getDelivery, listAttempts, summaryItem, putPendingDeliveries } from '../../lambdas/store/deliveries';
import { batchWriteAll } from '../../lambdas/store/table-io';
import { RETENTION_TTL_DAYS } from '../../lambdas/domain/scheduled-jobs';
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { getEndpointRecord, writeEndpointSecrets } from '../../lambdas/store/endpoints';
import { keys, TABLE } from '../../lambdas/store/table-schema';
import { workspaceRegistryKeys } from '../../lambdas/store/workspace-registry';
import { capturingQueue, sealedSecrets, seedEndpoint, testCatalogue, testSealer } from '../helpers/pipeline';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

const DAY = 24 * 3600_000;

function row(createdAt: Date, endpointId: string, status: DeliveryRecord['status'] = 'delivered'): DeliveryRecord {
  const iso = createdAt.toISOString();
  return {
    deliveryId: newId('whd', createdAt),
    workspace: 'ret',
    endpointId,
    status,
    attempts: 1,
    evidenceCount: status === 'pending' ? 0 : 1,
    nextAttemptAt: null,
    eventType: 'webhook.test_event',
    eventId: null,
    payload: { n: 1 },
    replayedFrom: null,
    lastResponseStatus: 200,
    lastError: null,
    createdAt: iso,
    updatedAt: iso,
  };
}

/** Rows TTL has not removed (DynamoDB Local removes expired items too): written without the TTL attribute. */
async function putUnexpiring(rows: readonly DeliveryRecord[]): Promise<void> {
  await batchWriteAll(
    table,
    rows.map((r) => {
      const { [TABLE.ttlAttribute]: _ttl, ...item } = summaryItem(r);
      return { PutRequest: { Item: item } };
    }),
  );
}

describe('retention', () => {
  it('deletes at most 100 summaries older than 30 days per pass, oldest first, with their attempts; a backlog drains over passes', async () => {
    const now = new Date(Math.floor(Date.now() / 3600_000) * 3600_000);
    const ep = 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC';
    // 180 old rows spread over four days (40, 39, 38, 37 days ago), and 5 recent ones, found through
    // the registry and the delivery log.
    const old = Array.from({ length: 180 }, (_, i) => row(new Date(now.getTime() - (40 - Math.floor(i / 50)) * DAY + i * 1000), ep));
    const recent = Array.from({ length: 5 }, (_, i) => row(new Date(now.getTime() - 2 * DAY + i), ep));
    await putUnexpiring(old);
    await putPendingDeliveries(table, recent);
    await table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: { ...keys.workspace('ret'), type: 'workspace', slug: 'ret', ...workspaceRegistryKeys('ret') },
      }),
    );
    // Give the oldest one an attempt item and a state too, to see the cascade.
    const { recordObservation } = await import('../../lambdas/store/deliveries');
    const first = { ...old[0]!, status: 'pending' as const, evidenceCount: 0 };
    await putUnexpiring([first]);
    await recordObservation(
      table,
      {
        delivery: first,
        endpoint: null,
        attempt: {
          outcome: 'delivered',
          timestamp: first.createdAt,
          durationMs: 5,
          failureReason: null,
          requestHeaders: {},
          responseStatus: 200,
          responseBody: 'ok',
        },
        status: 'delivered',
        http: true,
        nextAttemptAt: null,
        streak: 'none',
      },
      now,
    );
    expect((await listAttempts(table, first.deliveryId, 5)).items).toHaveLength(1);

    const pass1 = await runRetention({ table, now: () => now });
    expect(pass1.deleted).toBe(100);
    // Oldest first: the first 100 are gone, the next 80 remain.
    for (const r of old.slice(0, 100)) expect(await getDelivery(table, r.deliveryId)).toBeNull();
    for (const r of old.slice(100)) expect(await getDelivery(table, r.deliveryId)).not.toBeNull();
    expect((await listAttempts(table, first.deliveryId, 5)).items).toHaveLength(0);
    const { Items: leftOfFirst = [] } = await table.doc.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.delivery(first.deliveryId).pk },
      }),
    );
    expect(leftOfFirst).toEqual([]);

    // The rest: the next pass.
    const pass2 = await runRetention({ table, now: () => now });
    expect(pass2.deleted).toBe(80);
    for (const r of old.slice(100)) expect(await getDelivery(table, r.deliveryId)).toBeNull();
    const pass3 = await runRetention({ table, now: () => now });
    expect(pass3.deleted).toBe(0);
    for (const r of recent) expect(await getDelivery(table, r.deliveryId)).not.toBeNull();
  }, 120_000);

  it('gives every summary, state and attempt a TTL of its creation plus 31 days, so DynamoDB removes the bulk', async () => {
    const created = new Date(Math.floor(Date.now() / 3600_000) * 3600_000 - 6 * DAY);
    const r = { ...row(created, 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABD'), status: 'pending' as const, evidenceCount: 0 };
    await putPendingDeliveries(table, [r]);
    const { recordObservation } = await import('../../lambdas/store/deliveries');
    const attempt = (status: number) => ({
      outcome: status < 300 ? ('delivered' as const) : ('failed' as const),
      timestamp: created.toISOString(),
      durationMs: 5,
      failureReason: null,
      requestHeaders: {},
      responseStatus: status,
      responseBody: 'ok',
    });
    // The first attempt goes into the state item; the second is an item of its own.
    const first = await recordObservation(
      table,
      {
        delivery: r,
        endpoint: null,
        attempt: attempt(503),
        status: 'failed',
        http: true,
        nextAttemptAt: created.toISOString(),
        streak: 'none',
      },
      created,
    );
    expect(first.kind).toBe('recorded');
    const afterFirst = first.kind === 'recorded' ? first.delivery : r;
    expect(
      (
        await recordObservation(
          table,
          {
            delivery: afterFirst,
            endpoint: null,
            attempt: attempt(200),
            status: 'delivered',
            http: true,
            nextAttemptAt: null,
            streak: 'none',
          },
          created,
        )
      ).kind,
    ).toBe('recorded');
    const expected = Math.floor(created.getTime() / 1000) + RETENTION_TTL_DAYS * 24 * 3600;
    expect(RETENTION_TTL_DAYS).toBe(31);
    for (const key of [keys.delivery(r.deliveryId), keys.deliveryState(r.deliveryId), keys.attempt(r.deliveryId, 2)]) {
      const item = (await table.doc.send(new GetCommand({ TableName: table.tableName, Key: key }))).Item;
      expect(item?.[TABLE.ttlAttribute], key.sk).toBe(expected);
    }
    expect((await listAttempts(table, r.deliveryId, 5)).items.map((a) => a.responseStatus)).toEqual([503, 200]);
  });
});

describe('grace-window expiry', () => {
  it('drops replaced secrets whose window ended, and only those', async () => {
    const now = new Date();
    const ended = await seedEndpoint(table, {
      workspace: 'grace',
      url: 'https://a.example.com',
      secrets: await sealedSecrets(
        [{ secret: 'whsec_new' }, { secret: 'whsec_old', expiresAt: new Date(now.getTime() - 1000).toISOString() }],
        now,
      ),
    });
    const open = await seedEndpoint(table, {
      workspace: 'grace',
      url: 'https://b.example.com',
      secrets: await sealedSecrets(
        [{ secret: 'whsec_new2' }, { secret: 'whsec_old2', expiresAt: new Date(now.getTime() + SECRET_GRACE_MS).toISOString() }],
        now,
      ),
    });
    // Index entries as rotation writes them.
    for (const ep of [ended, open])
      await writeEndpointSecrets(table, 'grace', ep.endpointId, ep.secrets, ep.secretVersion, now, {
        action: 'webhook.secret_rotated',
        actor: 't',
        targetId: ep.endpointId,
      });
    const result = await runSecretExpiry({ table, now: () => now });
    expect(result.expired).toBe(1);
    const kept = async (endpointId: string) => openSecrets((await getEndpointRecord(table, 'grace', endpointId))!.secrets, testSealer);
    expect(await kept(ended.endpointId)).toEqual(['whsec_new']);
    expect(await kept(open.endpointId)).toEqual(['whsec_new2', 'whsec_old2']);
    expect((await runSecretExpiry({ table, now: () => now })).expired).toBe(0);
  });

  /** Everything the grace index holds, whole items as a query of it reads them. */
  async function graceIndex() {
    const out = await table.doc.send(
      new QueryCommand({
        TableName: table.tableName,
        IndexName: TABLE.gsi1.name,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': TABLE.gsi1.partitionKey },
        ExpressionAttributeValues: { ':pk': keys.secretGracePk },
      }),
    );
    return out.Items ?? [];
  }

  it('keeps secrets out of the index: a grace entry holds keys only (docs/architecture.md#secrets)', async () => {
    const now = new Date();
    const ep = await seedEndpoint(table, {
      workspace: 'grace-idx',
      url: 'https://c.example.com',
      secrets: await sealedSecrets(
        [{ secret: 'whsec_current' }, { secret: 'whsec_replaced', expiresAt: new Date(now.getTime() + SECRET_GRACE_MS).toISOString() }],
        now,
      ),
    });
    await writeEndpointSecrets(table, 'grace-idx', ep.endpointId, ep.secrets, ep.secretVersion, now, {
      action: 'webhook.secret_rotated',
      actor: 't',
      targetId: ep.endpointId,
    });
    const entries = (await graceIndex()).filter((i) => i.endpointId === ep.endpointId);
    expect(entries).toHaveLength(1);
    expect(entries[0]).not.toHaveProperty('secrets');
    expect(JSON.stringify(entries)).not.toContain('whsec_');
    for (const { sealed } of ep.secrets) expect(JSON.stringify(entries)).not.toContain(sealed.ciphertext);
  });
});

describe('stuck-pending repair', () => {
  it('re-queues a row whose message was never sent (crash between write and enqueue), and nothing else', async () => {
    const endpoint = await seedEndpoint(table, { workspace: 'crash', url: 'https://hooks.example.com/x' });
    const then = new Date(Date.now() - 10 * 60_000);
    // The publisher writes its rows, then "crashes" before the enqueue.
    const crashing = { send: async () => Promise.reject(new Error('crash before enqueue')) };
    const lost = await publishEvent(
      { table, queue: crashing, eventTypes: testCatalogue, now: () => then },
      { workspace: 'crash', type: 'order.shipped', payload: { orderId: 'x' } },
    );
    expect(lost).toMatchObject({ queued: false, deliveryIds: [expect.stringMatching(/^whd_/)] });
    const fresh = capturingQueue();
    const { deliveryIds: recentIds } = await publishEvent(
      { table, queue: fresh, eventTypes: testCatalogue, now: () => new Date() },
      { workspace: 'crash', type: 'order.shipped', payload: { orderId: 'y' } },
    );

    const queue = capturingQueue();
    const result = await runPendingRepair({ table, queue, now: () => new Date() });
    expect(result.requeued).toBe(1);
    expect(queue.sent).toHaveLength(1);
    expect(queue.sent[0]!.deliveryId).not.toBe(recentIds[0]);
    const stuck = await getDelivery(table, queue.sent[0]!.deliveryId);
    expect(stuck).toMatchObject({ status: 'pending', endpointId: endpoint.endpointId, payload: { orderId: 'x' } });
  });
});
