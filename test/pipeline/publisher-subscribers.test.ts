/**
 * The publisher's subscriber lookup (docs/architecture.md#subscriptions): it reads only the
 * subscription items of the event's type, so its read units follow the subscribers, not the
 * workspace's endpoints (measured with ReturnConsumedCapacity on DynamoDB Local); WorkspaceNotFound
 * is still answered.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { publishEvent, type PublishDeps } from '../../lambdas/pipeline/publisher';
import { newId } from '../../lambdas/domain/ids';
import { createTableContext, type TableContext } from '../../lambdas/store/client';
import { putEndpoint, type EndpointRecord } from '../../lambdas/store/endpoints';
import { planSubscriptionSteps } from '../../lambdas/domain/subscription-plan';
import { findSubscribers, subscriptionWrites } from '../../lambdas/store/subscriptions';
import { batchWriteAll } from '../../lambdas/store/table-io';
import { keys, SK_PREFIX } from '../../lambdas/store/table-schema';
import { createWorkspace } from '../../lambdas/store/workspaces';
import { createEventCatalogue } from '../../lambdas/domain/event-catalogue';
import { capturingQueue } from '../helpers/pipeline';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

const catalogue = createEventCatalogue(
  ['order.shipped', 'order.created', 'noise.type'].map((name) => ({ name, payloadSchema: { type: 'object' } })),
);

/** An endpoint item of about 1 KB, as deployed ones are (sealed secrets, a description). */
function endpointRecord(workspace: string, eventTypes: string[], enabled = true, at = new Date()): EndpointRecord {
  return {
    endpointId: newId('whe', at),
    workspace,
    url: `https://hooks.example.com/receivers/${workspace}/${Math.random().toString(36).slice(2)}`,
    eventTypes,
    description: 'Receiver of the orders service; owned by the platform team. '.repeat(6),
    enabled,
    consecutiveFailures: 0,
    createdAt: at.toISOString(),
    updatedAt: at.toISOString(),
    // Base64 sizes of a sealed `whsec_` secret and of a KMS-encrypted 256-bit data key.
    secrets: [0, 1].map((n) => ({
      sealed: { ciphertext: `${n}`.repeat(68), iv: 'a'.repeat(16), tag: 'b'.repeat(24), dataKey: 'd'.repeat(248) },
      createdAt: at.toISOString(),
      expiresAt: null,
    })),
    secretVersion: 1,
  };
}

async function seed(workspace: string, eventTypes: string[], enabled = true): Promise<EndpointRecord> {
  const record = endpointRecord(workspace, eventTypes, enabled);
  expect(await putEndpoint(table, record, new Date(), { action: 'webhook.created', actor: 'test', targetId: record.endpointId })).toBe(
    true,
  );
  return record;
}

/**
 * Many endpoints at once, for the cost figures: the endpoint items and the subscription items
 * putEndpoint writes, in batches (without the count and audit items, which the publisher never reads).
 */
async function seedMany(records: readonly EndpointRecord[]) {
  const items = records.flatMap((r) => [
    { ...keys.endpoint(r.workspace, r.endpointId), type: 'endpoint', ...r },
    ...subscriptionWrites(table, r.workspace, r.endpointId, planSubscriptionSteps(null, r, { rewriteEnabled: false })[0]!.ops, null).map(
      (w) => w.Put!.Item!,
    ),
  ]);
  await batchWriteAll(
    table,
    items.map((Item) => ({ PutRequest: { Item } })),
  );
}

/** A second client on the same table that asks for, and adds up, the consumed capacity of every call. */
function countingTable(): TableContext & { reads: () => number; calls: () => string[]; reset: () => void } {
  const counted = createTableContext({ tableName: table.tableName, endpoint: inject('dynamoDbEndpoint') });
  let reads = 0;
  let calls: string[] = [];
  counted.doc.middlewareStack.add(
    (next, context) => async (args) => {
      (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
      const out = await next(args);
      const consumed = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
      const units = [consumed ?? []].flat().reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
      if (/^(Query|GetItem|BatchGetItem|TransactGetItems)Command$/.test(context.commandName ?? '')) reads += units;
      calls.push(`${context.commandName} ${units}`);
      return out;
    },
    { step: 'initialize', name: 'countConsumedCapacity' },
  );
  return Object.assign(counted, { reads: () => reads, calls: () => calls, reset: () => ((reads = 0), (calls = [])) });
}

const deps = (t: TableContext, now = () => new Date()): PublishDeps & { queue: ReturnType<typeof capturingQueue> } => ({
  table: t,
  queue: capturingQueue(),
  eventTypes: catalogue,
  now,
});

/** The reads of the release before subscription items: the workspace, strongly consistent, then every endpoint item, filtered. */
async function previousReleaseReads(t: TableContext, slug: string, eventType: string): Promise<number> {
  await t.doc.send(new GetCommand({ TableName: t.tableName, Key: keys.workspace(slug), ConsistentRead: true }));
  let start: Record<string, unknown> | undefined;
  let found = 0;
  do {
    const page = await t.doc.send(
      new QueryCommand({
        TableName: t.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        FilterExpression: 'contains(eventTypes, :type)',
        ExpressionAttributeValues: { ':pk': keys.workspacePk(slug), ':prefix': SK_PREFIX.endpoint, ':type': eventType },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    found += page.Items?.length ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return found;
}

describe('the publisher reads only the subscribers of the event type', () => {
  it('a workspace of 200 endpoints, 2 of them subscribed: one small Query, whatever the other 198', async () => {
    await createWorkspace(table, { slug: 'cost-200', name: 'cost' }, new Date());
    const subscribed = [await seed('cost-200', ['order.shipped', 'order.created']), await seed('cost-200', ['order.shipped'], false)];
    await seedMany(Array.from({ length: 198 }, () => endpointRecord('cost-200', ['order.created', 'noise.type'])));
    const counted = countingTable();
    const d = deps(counted);
    // The first event of this container reads the workspace item once (that it exists), then never again.
    await publishEvent(d, { id: 'warm', workspace: 'cost-200', type: 'order.shipped', payload: {} });
    counted.reset();
    const lookup = await findSubscribers(counted, 'cost-200', 'order.shipped');
    expect(lookup!.map((s) => s.endpointId).sort()).toEqual(subscribed.map((e) => e.endpointId).sort());
    expect(counted.calls()).toEqual(['QueryCommand 0.5']);
    counted.reset();
    const result = await publishEvent(d, { id: 'e-1', workspace: 'cost-200', type: 'order.shipped', payload: { n: 1 } });
    expect(result.deliveryIds).toHaveLength(1);
    expect(result.heldDeliveryIds).toHaveLength(1);
    expect(counted.calls()[0]).toBe('QueryCommand 0.5');
    // The same lookup the way the previous release did it reads every endpoint item.
    counted.reset();
    expect(await previousReleaseReads(counted, 'cost-200', 'order.shipped')).toBe(2);
    expect(counted.reads()).toBeGreaterThan(30);
    counted.doc.destroy();
  }, 120_000);

  it('read units per event before and after, for 1, 10 and 1,000 endpoints all subscribed (printed)', async () => {
    const rows: string[] = [];
    for (const n of [1, 10, 1000]) {
      const slug = `cost-${n}`;
      await createWorkspace(table, { slug, name: slug }, new Date());
      await seedMany(Array.from({ length: n }, () => endpointRecord(slug, ['order.shipped'])));
      const counted = countingTable();
      await previousReleaseReads(counted, slug, 'order.shipped');
      const before = counted.reads();
      const d = deps(counted);
      await publishEvent(d, { id: `warm-${n}`, workspace: slug, type: 'order.shipped', payload: {} });
      counted.reset();
      const subscribers = await findSubscribers(counted, slug, 'order.shipped');
      expect(subscribers).toHaveLength(n);
      const lookup = counted.reads();
      counted.reset();
      await publishEvent(d, { id: `e-${n}`, workspace: slug, type: 'order.shipped', payload: {} });
      const publish = counted.reads();
      rows.push(
        `${n} endpoints: before ${before} RCU (workspace + endpoint items), after ${lookup} RCU (subscription items); whole publish now ${publish} RCU`,
      );
      // About 100 bytes a subscriber against about 1 KB an endpoint item.
      expect(lookup).toBeLessThanOrEqual(Math.max(0.5, before / 5));
      counted.doc.destroy();
    }
    console.info(`Publisher read units per event (DynamoDB Local, ReturnConsumedCapacity TOTAL):\n${rows.join('\n')}`);
  }, 180_000);
});

describe('the workspace check', () => {
  it('answers WorkspaceNotFound for an unknown workspace, and nothing for a workspace without subscribers', async () => {
    await expect(publishEvent(deps(table), { workspace: 'no-such-ws', type: 'order.shipped', payload: {} })).rejects.toMatchObject({
      tag: 'WorkspaceNotFound',
    });
    await createWorkspace(table, { slug: 'empty-new', name: 'e' }, new Date());
    for (const slug of ['empty-new', 'empty-new']) {
      expect(await publishEvent(deps(table), { workspace: slug, type: 'order.shipped', payload: {} })).toEqual({
        deliveryIds: [],
        heldDeliveryIds: [],
        queued: true,
      });
    }
  });

  it('queues a new delivery in the fast lane: the subscription item carries no lane state, and the fast dispatcher moves a failing endpoint’s delivery', async () => {
    await createWorkspace(table, { slug: 'lanes', name: 'l' }, new Date());
    const failing = endpointRecord('lanes', ['order.shipped']);
    await putEndpoint(table, { ...failing, consecutiveFailures: 3 }, new Date(), {
      action: 'webhook.created',
      actor: 'test',
      targetId: failing.endpointId,
    });
    const d = deps(table);
    const result = await publishEvent(d, { workspace: 'lanes', type: 'order.shipped', payload: {} });
    expect(result.deliveryIds).toHaveLength(1);
    expect(d.queue.sent.map((m) => m.deliveryId)).toEqual(result.deliveryIds);
  });
});
