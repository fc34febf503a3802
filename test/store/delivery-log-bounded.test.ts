/**
 * docs/behaviour.md#workspace-delivery-log: every page of the delivery log does
 * bounded work. On a workspace of a few thousand deliveries (the bound does not
 * depend on the size), counted at the document client: no page reads more than
 * the published budget of items plus `limit` summaries, whatever the
 * filter; a selective filter gives short pages whose cursors still reach every
 * match; a small workspace reads no less and the big one no more.
 */
import fc from 'fast-check';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryLogReadBudget } from '../../lambdas/contract/delivery-log';
import type { DeliveryStatus } from '../../lambdas/contract/schemas';
import { deliveryLogFilter } from '../../lambdas/domain/delivery-log';
import { newPendingDelivery, type DeliveryRecord } from '../../lambdas/domain/delivery-lifecycle';
import { newId } from '../../lambdas/domain/ids';
import { putPendingDeliveries } from '../../lambdas/store/deliveries';
import { listDeliveryLog } from '../../lambdas/store/delivery-log';
import { keys } from '../../lambdas/store/table-schema';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
/** What the document client read since the last reset: index or table entries looked at, per command. */
const reads = { entries: 0, calls: 0 };

const BIG = 'big-workspace';
const SMALL = 'small-workspace';
const SIZE = 2_000;
// Yesterday, on the hour: deliveries expire by TTL 31 days after creation, in DynamoDB Local too.
const T0 = Math.floor(Date.now() / 3600_000) * 3600_000 - 24 * 3600_000;
const endpoints = [0, 1, 2].map((i) => newId('whe', new Date(T0 + i)));
let big: DeliveryRecord[] = [];

/** Every 100th delivery dead-lettered, every 10th failed, the rest delivered; three event types, three endpoints. */
function seed(slug: string, count: number): DeliveryRecord[] {
  return Array.from({ length: count }, (_, i) => {
    const status: DeliveryStatus = i % 100 === 7 ? 'dead_lettered' : i % 10 === 3 ? 'failed' : 'delivered';
    const eventType = ['order.shipped', 'order.paid', 'invoice.paid'][i % 3]!;
    const record = newPendingDelivery(
      { workspace: slug, endpointId: endpoints[i % 3]!, eventType, payload: { i } },
      new Date(T0 + i * 1_000),
    );
    return { ...record, status };
  });
}

beforeAll(async () => {
  table = await freshTable();
  table.doc.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      const output = (result.output ?? {}) as { ScannedCount?: number; Responses?: Record<string, unknown[]>; Item?: unknown };
      const command = String(context.commandName);
      reads.calls++;
      if (command.startsWith('Query')) reads.entries += output.ScannedCount ?? 0;
      else if (command.startsWith('BatchGet')) reads.entries += Object.values(output.Responses ?? {}).flat().length;
      else if (command.startsWith('Get')) reads.entries += output.Item ? 1 : 0;
      return result;
    },
    { step: 'initialize', name: 'countReads' },
  );
  for (const [i, endpointId] of endpoints.entries()) {
    for (const slug of [BIG, SMALL]) {
      await table.doc.send(
        new PutCommand({ TableName: table.tableName, Item: { ...keys.endpoint(slug, endpointId), type: 'endpoint', endpointId, n: i } }),
      );
    }
  }
  big = seed(BIG, SIZE);
  // Batch writes through the store, four streams at once.
  await Promise.all(
    [0, 1, 2, 3].map((k) =>
      putPendingDeliveries(
        table,
        big.filter((_, i) => i % 4 === k),
      ),
    ),
  );
  await putPendingDeliveries(table, seed(SMALL, 40));
}, 120_000);

afterAll(async () => {
  await table?.drop();
});

/** One page and what it read. */
async function page(slug: string, query: Parameters<typeof deliveryLogFilter>[0], limit: number, cursor?: string) {
  reads.entries = 0;
  reads.calls = 0;
  const result = await listDeliveryLog(table, slug, deliveryLogFilter(query), limit, cursor);
  return { ...result, read: reads.entries };
}

/** Every page of a filter until the last, each checked against the bound. */
async function walk(slug: string, query: Parameters<typeof deliveryLogFilter>[0], limit: number) {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  let short = 0;
  for (;;) {
    const p = await page(slug, query, limit, cursor);
    expect(p.read, `page ${pages}`).toBeLessThanOrEqual(deliveryLogReadBudget(limit) + limit + 1);
    expect(p.items.length).toBeLessThanOrEqual(limit);
    ids.push(...p.items.map((d) => d.deliveryId));
    pages++;
    if (!p.nextCursor) break;
    if (p.items.length < limit) short++;
    cursor = p.nextCursor;
    expect(pages).toBeLessThan(SIZE);
  }
  return { ids, pages, short };
}

const expectedIds = (pick: (d: DeliveryRecord) => boolean) =>
  big
    .filter(pick)
    .map((d) => d.deliveryId)
    .sort()
    .reverse();

describe('bounded pages on a big workspace', () => {
  it('an unfiltered page is full and reads at most the budget, on a big workspace as on a small one', async () => {
    for (const limit of [1, 10, 50, 200]) {
      const bigPage = await page(BIG, {}, limit);
      const smallPage = await page(SMALL, {}, limit);
      expect(bigPage.items).toHaveLength(limit);
      expect(bigPage.items.map((d) => d.deliveryId)).toEqual(expectedIds(() => true).slice(0, limit));
      expect(bigPage.read).toBeLessThanOrEqual(deliveryLogReadBudget(limit) + limit);
      expect(bigPage.nextCursor).not.toBeNull();
      expect(smallPage.read).toBeLessThanOrEqual(deliveryLogReadBudget(limit) + limit);
    }
  });

  it('any filter, any limit: every page reads at most its budget', async () => {
    const query = fc.record(
      {
        status: fc.constantFrom('dead_lettered', 'failed', 'failed,dead_lettered', 'pending'),
        eventType: fc.constantFrom('order.*', 'invoice.paid', 'webhook.*'),
        endpointId: fc.constantFrom(...endpoints),
        since: fc.integer({ min: 0, max: SIZE }).map((s) => new Date(T0 + s * 1_000).toISOString()),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(query, fc.integer({ min: 1, max: 200 }), async (q, limit) => {
        const first = await page(BIG, q, limit);
        expect(first.read).toBeLessThanOrEqual(deliveryLogReadBudget(limit) + limit + 1);
        if (first.nextCursor) {
          const second = await page(BIG, q, limit, first.nextCursor);
          expect(second.read).toBeLessThanOrEqual(deliveryLogReadBudget(limit) + limit + 1);
        }
      }),
      { numRuns: 15 },
    );
    // An endpoint filter merges the endpoint's 9 partitions and checks summaries for its filters: a page is many small reads.
  }, 240_000);

  it('a selective filter gives bounded, possibly short, pages whose cursors reach every match', async () => {
    const dead = await walk(BIG, { status: 'dead_lettered' }, 50);
    expect(dead.ids).toEqual(expectedIds((d) => d.status === 'dead_lettered'));
    expect(dead.ids).toHaveLength(SIZE / 100);
    // 20 matches among 2,000: the pages come back short (or empty) with a cursor rather than reading on.
    expect(dead.short).toBeGreaterThan(0);

    const narrow = await walk(
      BIG,
      { status: 'failed,dead_lettered', eventType: 'order.*', since: new Date(T0 + 1_000_000).toISOString() },
      20,
    );
    expect(narrow.ids).toEqual(
      expectedIds(
        (d) =>
          ['failed', 'dead_lettered'].includes(d.status) && d.eventType.startsWith('order.') && Date.parse(d.createdAt) >= T0 + 1_000_000,
      ),
    );
  }, 120_000);

  it('an endpoint filter reads that endpoint only, bounded the same way', async () => {
    const one = await walk(BIG, { endpointId: endpoints[1]!, status: 'failed' }, 25);
    expect(one.ids).toEqual(expectedIds((d) => d.endpointId === endpoints[1] && d.status === 'failed'));
    const foreign = await page(BIG, { endpointId: newId('whe', new Date(T0)) }, 25);
    expect(foreign).toMatchObject({ items: [], nextCursor: null });
    expect(foreign.read).toBe(0);
  }, 120_000);
});
