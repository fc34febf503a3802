/**
 * Subscription items (docs/architecture.md#subscriptions): the items kept in step with the endpoint item by create, update (event types, enabled), delete,
 * concurrent updates, changes too large for one transaction, and the copy sync after a write of the
 * endpoint item alone.
 */
import { isAppError } from '../../lambdas/contract/errors';
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../lambdas/domain/ids';
import { deleteEndpoint, getEndpointRecord, putEndpoint, updateEndpoint, type EndpointRecord } from '../../lambdas/store/endpoints';
import { SUBSCRIPTION_OPS_PER_STEP } from '../../lambdas/domain/subscription-plan';
import { syncSubscriptionCopies } from '../../lambdas/store/subscriptions';
import { keys, SK_PREFIX } from '../../lambdas/store/table-schema';
import { createWorkspace } from '../../lambdas/store/workspaces';
import { SEEDED_SECRET, sealedSecrets } from '../helpers/pipeline';
import { withOutbox } from '../helpers/outbox';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

const audit = (targetId: string) => ({ action: 'webhook.updated', actor: 'test', targetId });
const types = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `t.n${String(from + i).padStart(3, '0')}`);

async function endpointRecord(workspace: string, eventTypes: string[], enabled = true): Promise<EndpointRecord> {
  const now = new Date();
  return {
    endpointId: newId('whe', now),
    workspace,
    url: 'https://hooks.example.com/x',
    eventTypes,
    description: null,
    enabled,
    consecutiveFailures: 0,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
    secrets: await sealedSecrets([{ secret: SEEDED_SECRET }], now),
    secretVersion: 1,
  };
}

async function created(workspace: string, eventTypes: string[], enabled = true): Promise<EndpointRecord> {
  await createWorkspace(table, { slug: workspace, name: workspace }, new Date());
  const record = await endpointRecord(workspace, eventTypes, enabled);
  expect(await putEndpoint(table, record, new Date(), { action: 'webhook.created', actor: 'test', targetId: record.endpointId })).toBe(
    true,
  );
  return record;
}

/** Every subscription item of a workspace as `type endpointId enabled`, strongly consistent. */
async function subscriptionItems(workspace: string): Promise<string[]> {
  const out: string[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await table.doc.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': keys.workspacePk(workspace), ':p': keys.subscriptionPrefix() },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of page.Items ?? []) {
      const [, eventType, endpointId] = (item.sk as string).split('#');
      expect(
        Object.keys(item)
          .filter((k) => k !== 'filter')
          .sort(),
      ).toEqual(['enabled', 'pk', 'sk', 'type']);
      out.push(`${eventType} ${endpointId} ${item.enabled} ${item.filter ?? '-'}`);
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return out.sort();
}

/** What the items should be: one per (endpoint, event type), with the endpoint's `enabled` and filter, from the endpoint items. */
async function expectedItems(workspace: string): Promise<string[]> {
  const page = await table.doc.send(
    new QueryCommand({
      TableName: table.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': keys.workspacePk(workspace), ':p': SK_PREFIX.endpoint },
      ConsistentRead: true,
    }),
  );
  return (page.Items ?? [])
    .flatMap((e) => (e.eventTypes as string[]).map((t) => `${t} ${e.endpointId} ${e.enabled} ${e.filter ?? '-'}`))
    .sort();
}

async function expectInStep(workspace: string) {
  expect(await subscriptionItems(workspace)).toEqual(await expectedItems(workspace));
}

describe('subscription items kept in step with the endpoint', () => {
  it('are written with the endpoint, changed with its event types and enabled flag, and deleted with it', async () => {
    const a = await created('sub-crud', ['order.shipped', 'webhook.test_event']);
    const b = await created('sub-crud', ['order.shipped'], false);
    await expectInStep('sub-crud');
    expect(await subscriptionItems('sub-crud')).toHaveLength(3);

    await updateEndpoint(
      table,
      'sub-crud',
      a.endpointId,
      { eventTypes: ['webhook.test_event', 'webhook.disabled'] },
      new Date(),
      audit(a.endpointId),
    );
    await expectInStep('sub-crud');
    await updateEndpoint(table, 'sub-crud', a.endpointId, { enabled: false }, new Date(), audit(a.endpointId));
    await expectInStep('sub-crud');
    await updateEndpoint(
      table,
      'sub-crud',
      b.endpointId,
      { enabled: true, eventTypes: ['order.shipped', 'webhook.created'] },
      new Date(),
      audit(b.endpointId),
    );
    await expectInStep('sub-crud');
    // Fields the items do not copy write none of them.
    await updateEndpoint(
      table,
      'sub-crud',
      b.endpointId,
      { url: 'https://hooks.example.com/y', description: 'd' },
      new Date(),
      audit(b.endpointId),
    );
    await expectInStep('sub-crud');
    expect(await getEndpointRecord(table, 'sub-crud', b.endpointId)).toMatchObject({
      url: 'https://hooks.example.com/y',
      description: 'd',
      enabled: true,
      eventTypes: ['order.shipped', 'webhook.created'],
    });

    expect(await deleteEndpoint(table, 'sub-crud', a.endpointId, new Date(), audit(a.endpointId))).toBe(true);
    await expectInStep('sub-crud');
    expect(await deleteEndpoint(table, 'sub-crud', a.endpointId, new Date(), audit(a.endpointId))).toBe(false);
    expect(await updateEndpoint(table, 'sub-crud', a.endpointId, { enabled: true }, new Date(), audit(a.endpointId))).toBeNull();
    expect(await deleteEndpoint(table, 'sub-crud', b.endpointId, new Date(), audit(b.endpointId))).toBe(true);
    expect(await subscriptionItems('sub-crud')).toEqual([]);
  });

  it('enabling resets the streak and rewrites the copies an auto-disable left saying enabled', async () => {
    const a = await created('sub-auto', ['order.shipped']);
    // What the dispatcher's auto-disable does: the endpoint item only.
    await table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: { ...keys.endpoint('sub-auto', a.endpointId), type: 'endpoint', ...a, enabled: false, consecutiveFailures: 20 },
      }),
    );
    expect(await subscriptionItems('sub-auto')).toEqual([`order.shipped ${a.endpointId} true -`]);
    await updateEndpoint(table, 'sub-auto', a.endpointId, { enabled: false }, new Date(), audit(a.endpointId));
    await expectInStep('sub-auto');
    await updateEndpoint(table, 'sub-auto', a.endpointId, { enabled: true }, new Date(), audit(a.endpointId));
    await expectInStep('sub-auto');
    expect(await getEndpointRecord(table, 'sub-auto', a.endpointId)).toMatchObject({ enabled: true, consecutiveFailures: 0 });
  });

  it('syncSubscriptionCopies brings the copies in step after a write of the endpoint item alone (the auto-disable), and does nothing for a deleted endpoint', async () => {
    const a = await created('sub-sync', ['order.shipped', 'webhook.test_event']);
    await table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: { ...keys.endpoint('sub-sync', a.endpointId), type: 'endpoint', ...a, enabled: false, consecutiveFailures: 20 },
      }),
    );
    await syncSubscriptionCopies(table, 'sub-sync', a.endpointId);
    await expectInStep('sub-sync');
    expect(await subscriptionItems('sub-sync')).toEqual([
      `order.shipped ${a.endpointId} false -`,
      `webhook.test_event ${a.endpointId} false -`,
    ]);
    await deleteEndpoint(table, 'sub-sync', a.endpointId, new Date(), audit(a.endpointId));
    await syncSubscriptionCopies(table, 'sub-sync', a.endpointId);
    expect(await subscriptionItems('sub-sync')).toEqual([]);
  });

  it('stay in step under concurrent updates of one endpoint, each writing one audit event', async () => {
    const a = await created('sub-race', ['t.a', 't.b']);
    const changes = [
      { eventTypes: ['t.c'] },
      { enabled: false },
      { eventTypes: ['t.a', 't.d', 't.e'], enabled: true },
      { eventTypes: ['t.b'] },
      { enabled: true },
      { eventTypes: ['t.f', 't.a'], enabled: false },
      { url: 'https://hooks.example.com/z' },
      { eventTypes: ['t.g'] },
      { filter: { 'order.total': { $gt: 10 } }, eventTypes: ['t.h', 't.a'] },
    ];
    const results = await Promise.all(
      changes.map((c) => updateEndpoint(table, 'sub-race', a.endpointId, c, new Date(), audit(a.endpointId))),
    );
    expect(results.every((r) => r !== null)).toBe(true);
    await expectInStep('sub-race');
    const audits = await table.doc.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': keys.workspacePk('sub-race'), ':p': SK_PREFIX.audit },
        ConsistentRead: true,
      }),
    );
    expect((audits.Items ?? []).filter((i) => i.action === 'webhook.updated')).toHaveLength(changes.length);
  });

  it('under a crowd of concurrent updates: each one lands or is 409 Conflict (never another error), and the items stay in step', async () => {
    const a = await created('sub-crowd', ['t.a']);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 24 }, (_, i) =>
        updateEndpoint(
          table,
          'sub-crowd',
          a.endpointId,
          { eventTypes: [`t.${i % 5}`, 't.a'], enabled: i % 2 === 0 },
          new Date(),
          audit(a.endpointId),
        ),
      ),
    );
    const refused = outcomes.filter((o) => o.status === 'rejected').map((o) => o.reason as unknown);
    for (const reason of refused) expect(isAppError(reason) && reason.tag === 'Conflict', String(reason)).toBe(true);
    expect(outcomes.filter((o) => o.status === 'fulfilled' && o.value !== null).length).toBeGreaterThan(0);
    await expectInStep('sub-crowd');
  });

  it('stay in step when a concurrent delete races updates', async () => {
    const a = await created('sub-race-del', ['t.a']);
    const outcomes = await Promise.all([
      updateEndpoint(table, 'sub-race-del', a.endpointId, { eventTypes: ['t.b', 't.c'] }, new Date(), audit(a.endpointId)),
      deleteEndpoint(table, 'sub-race-del', a.endpointId, new Date(), audit(a.endpointId)),
      updateEndpoint(table, 'sub-race-del', a.endpointId, { eventTypes: ['t.d'], enabled: false }, new Date(), audit(a.endpointId)),
    ]);
    expect(outcomes[1]).toBe(true);
    expect(await getEndpointRecord(table, 'sub-race-del', a.endpointId)).toBeNull();
    expect(await subscriptionItems('sub-race-del')).toEqual([]);
  });

  it('handle endpoints of 100 event types (past one transaction) on create, a full swap with a disable, and delete', async () => {
    const a = await created('sub-big', types(100));
    expect(await getEndpointRecord(table, 'sub-big', a.endpointId)).toMatchObject({ eventTypes: types(100) });
    await expectInStep('sub-big');
    expect(await subscriptionItems('sub-big')).toHaveLength(100);
    const updated = await updateEndpoint(
      table,
      'sub-big',
      a.endpointId,
      { eventTypes: types(100, 100), enabled: false },
      new Date(),
      audit(a.endpointId),
    );
    expect(updated).toMatchObject({ eventTypes: types(100, 100), enabled: false });
    await expectInStep('sub-big');
    await updateEndpoint(table, 'sub-big', a.endpointId, { enabled: true }, new Date(), audit(a.endpointId));
    await expectInStep('sub-big');
    expect(await deleteEndpoint(table, 'sub-big', a.endpointId, new Date(), audit(a.endpointId))).toBe(true);
    expect(await subscriptionItems('sub-big')).toEqual([]);
  });

  it('delete, in one transaction at most, a full last step with its audit event, outbox item and purge job', async () => {
    // Every subscription op of the last step plus every item a delete adds must fit DynamoDB's 100.
    const withEvents = await withOutbox(table);
    try {
      for (const n of [SUBSCRIPTION_OPS_PER_STEP, SUBSCRIPTION_OPS_PER_STEP * 2]) {
        const a = await created(`sub-full-${n}`, types(n));
        const deleted = await deleteEndpoint(
          withEvents,
          `sub-full-${n}`,
          a.endpointId,
          new Date(),
          { ...audit(a.endpointId), action: 'webhook.deleted', event: { type: 'webhook.deleted', payload: { endpointId: a.endpointId } } },
          { jobId: newId('whj', new Date()) },
        );
        expect(deleted).toBe(true);
        expect(await subscriptionItems(`sub-full-${n}`)).toEqual([]);
      }
      expect((await withEvents.outboxItems()).filter((i) => i.type === 'webhook.deleted')).toHaveLength(2);
    } finally {
      await withEvents.dropOutbox();
    }
  });
});

describe('syncSubscriptionCopies beside concurrent endpoint changes', () => {
  it('never writes a stale copy over a concurrent endpoint change', async () => {
    await createWorkspace(table, { slug: 'sub-sync-race', name: 'race' }, new Date());
    const endpoints: EndpointRecord[] = [];
    for (let i = 0; i < 6; i++) endpoints.push(await created('sub-sync-race', [`t.x${i}`, 't.common']));
    await Promise.all([
      ...endpoints.map((e) => syncSubscriptionCopies(table, 'sub-sync-race', e.endpointId)),
      ...endpoints.map((e, i) =>
        i % 3 === 0
          ? deleteEndpoint(table, 'sub-sync-race', e.endpointId, new Date(), audit(e.endpointId))
          : updateEndpoint(
              table,
              'sub-sync-race',
              e.endpointId,
              { eventTypes: [`t.y${i}`], enabled: i % 2 === 0 },
              new Date(),
              audit(e.endpointId),
            ),
      ),
      ...endpoints.map((e) => syncSubscriptionCopies(table, 'sub-sync-race', e.endpointId)),
    ]);
    // Every sync and every change is done: whatever the order, no item disagrees with its endpoint.
    await expectInStep('sub-sync-race');
  });
});

describe('filter copies', () => {
  const filter = { 'order.region': { $in: ['eu', 'us'] }, $not: { test: true } };
  const text = JSON.stringify(filter);

  it('carry the endpoint filter as written, from create through every change, and go with the filter', async () => {
    await createWorkspace(table, { slug: 'sub-filter', name: 'filter' }, new Date());
    const record = { ...(await endpointRecord('sub-filter', ['order.shipped', 't.a'])), options: { filter } };
    await putEndpoint(table, record, new Date(), audit(record.endpointId));
    await expectInStep('sub-filter');
    expect(await subscriptionItems('sub-filter')).toEqual([
      `order.shipped ${record.endpointId} true ${text}`,
      `t.a ${record.endpointId} true ${text}`,
    ]);
    expect((await getEndpointRecord(table, 'sub-filter', record.endpointId))!.options).toEqual({ filter });

    // Another filter rewrites every copy; a change of the types alone carries the filter to new items.
    const other = { type: { $prefix: 'order.' } };
    await updateEndpoint(table, 'sub-filter', record.endpointId, { filter: other }, new Date(), audit(record.endpointId));
    await updateEndpoint(table, 'sub-filter', record.endpointId, { eventTypes: ['t.a', 't.b'] }, new Date(), audit(record.endpointId));
    await expectInStep('sub-filter');
    expect(await subscriptionItems('sub-filter')).toEqual([
      `t.a ${record.endpointId} true ${JSON.stringify(other)}`,
      `t.b ${record.endpointId} true ${JSON.stringify(other)}`,
    ]);
    await updateEndpoint(table, 'sub-filter', record.endpointId, { filter: null }, new Date(), audit(record.endpointId));
    await expectInStep('sub-filter');
    expect(await subscriptionItems('sub-filter')).toEqual([`t.a ${record.endpointId} true -`, `t.b ${record.endpointId} true -`]);
    expect((await getEndpointRecord(table, 'sub-filter', record.endpointId))!.options).toBeUndefined();
  });

  it('are rewritten on 100 event types (past one transaction) with a new filter', async () => {
    const a = await created('sub-filter-big', types(100));
    await updateEndpoint(table, 'sub-filter-big', a.endpointId, { filter }, new Date(), audit(a.endpointId));
    await expectInStep('sub-filter-big');
    expect((await subscriptionItems('sub-filter-big')).every((i) => i.endsWith(text))).toBe(true);
    await updateEndpoint(
      table,
      'sub-filter-big',
      a.endpointId,
      { eventTypes: types(100, 50), filter: null },
      new Date(),
      audit(a.endpointId),
    );
    await expectInStep('sub-filter-big');
    expect((await subscriptionItems('sub-filter-big')).every((i) => i.endsWith(' -'))).toBe(true);
  });

  it('syncSubscriptionCopies rewrites copies whose filter differs from the endpoint item', async () => {
    const a = await created('sub-filter-sync', ['t.a']);
    await table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: { ...keys.endpoint('sub-filter-sync', a.endpointId), type: 'endpoint', ...a, filter: text },
      }),
    );
    await syncSubscriptionCopies(table, 'sub-filter-sync', a.endpointId);
    expect(await subscriptionItems('sub-filter-sync')).toEqual([`t.a ${a.endpointId} true ${text}`]);
  });
});
