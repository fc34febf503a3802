/**
 * docs/behaviour.md#workspace-delivery-log, as a property against DynamoDB
 * Local: any combination of filters, paged with any limit while deliveries are
 * inserted between page reads, returns every delivery that matched when paging
 * began exactly once, newest first, and nothing that does not match; a cursor
 * made under other filters gives an empty page.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Delivery, DeliveryStatus } from '../../lambdas/contract/schemas';
import { deliveryLogFilter, matchesDeliveryLogFilter } from '../../lambdas/domain/delivery-log';
import { newPendingDelivery, type DeliveryRecord } from '../../lambdas/domain/delivery-lifecycle';
import { newId } from '../../lambdas/domain/ids';
import { putPendingDeliveries } from '../../lambdas/store/deliveries';
import { listDeliveryLog } from '../../lambdas/store/delivery-log';
import { keys } from '../../lambdas/store/table-schema';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
let run = 0;

beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

// Yesterday, on the hour: deliveries expire by TTL 31 days after creation, in DynamoDB Local too.
const T0 = Math.floor(Date.now() / 3600_000) * 3600_000 - 24 * 3600_000;
const SPAN = 10_000_000;
const STATUSES: DeliveryStatus[] = ['pending', 'delivered', 'failed', 'failed_permanent', 'dead_lettered'];
const TYPES = ['order.shipped', 'order.paid', 'invoice.paid', 'webhook.test_event'];

const row = fc.record({
  at: fc.integer({ min: 0, max: SPAN }),
  status: fc.constantFrom(...STATUSES),
  type: fc.constantFrom(...TYPES),
  endpoint: fc.integer({ min: 0, max: 2 }),
});
const query = fc.record(
  {
    status: fc.uniqueArray(fc.constantFrom(...STATUSES), { minLength: 1, maxLength: 3 }).map((s) => s.join(',')),
    eventType: fc.constantFrom('order.shipped', 'order.*', 'invoice.paid', 'webhook.*'),
    endpoint: fc.integer({ min: 0, max: 3 }),
    since: fc.integer({ min: 0, max: SPAN }).map((ms) => new Date(T0 + ms).toISOString()),
    until: fc.integer({ min: 0, max: SPAN }).map((ms) => new Date(T0 + ms).toISOString()),
  },
  { requiredKeys: [] },
);
const scenario = fc.record({
  // Enough rows that a page of a selective filter runs out of budget before the shards do.
  initial: fc.array(row, { minLength: 50, maxLength: 400 }),
  query,
  limit: fc.integer({ min: 1, max: 8 }),
  inserts: fc.array(fc.array(row, { maxLength: 4 }), { maxLength: 15 }),
});

type Row = typeof row extends fc.Arbitrary<infer R> ? R : never;

async function insert(slug: string, endpoints: string[], rows: readonly Row[]): Promise<DeliveryRecord[]> {
  const records = rows.map((r) => ({
    ...newPendingDelivery(
      { workspace: slug, endpointId: endpoints[r.endpoint]!, eventType: r.type, payload: { n: r.at } },
      new Date(T0 + r.at),
    ),
    status: r.status,
  }));
  await putPendingDeliveries(table, records);
  return records;
}

describe('the workspace delivery log', () => {
  it('pages any filter combination without gaps or duplicates under concurrent inserts', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ initial, query: q, limit, inserts }) => {
        const slug = `log-${++run}`;
        // Three endpoints of the workspace and one of another workspace (a filter on it matches nothing here).
        const endpoints = [0, 1, 2, 3].map(() => newId('whe', new Date(T0)));
        for (const [i, endpointId] of endpoints.entries()) {
          await table.doc.send(
            new PutCommand({
              TableName: table.tableName,
              Item: { ...keys.endpoint(i < 3 ? slug : `${slug}-other`, endpointId), type: 'endpoint', endpointId },
            }),
          );
        }
        const input = { ...q, endpointId: q.endpoint === undefined ? undefined : endpoints[q.endpoint] };
        if (input.since && input.until && input.since > input.until) [input.since, input.until] = [input.until, input.since];
        const filter = deliveryLogFilter(input);

        const original = await insert(slug, endpoints, initial);
        // Another workspace's deliveries never show.
        await insert(`${slug}-other`, endpoints, initial.slice(0, 5));
        const seen: Delivery[] = [];
        let cursor: string | undefined;
        for (let pages = 0; ; pages++) {
          expect(pages).toBeLessThan(500);
          const page = await listDeliveryLog(table, slug, filter, limit, cursor);
          expect(page.items.length).toBeLessThanOrEqual(limit);
          seen.push(...page.items);
          if (pages === 0 && page.nextCursor) {
            // Under other filters this cursor addresses nothing.
            const other = deliveryLogFilter({ ...input, eventType: input.eventType === 'order.*' ? 'order.paid' : 'order.*' });
            expect(await listDeliveryLog(table, slug, other, limit, page.nextCursor)).toEqual({ items: [], nextCursor: null });
          }
          await insert(slug, endpoints, inserts[pages] ?? []);
          if (!page.nextCursor) break;
          cursor = page.nextCursor;
        }
        expect(new Set(seen.map((d) => d.deliveryId)).size).toBe(seen.length);
        for (const d of seen) expect(matchesDeliveryLogFilter(filter, d), JSON.stringify(d)).toBe(true);
        const ids = seen.map((d) => d.deliveryId);
        expect(ids).toEqual([...ids].sort().reverse());
        // Every original match exactly once: the filter applied to what was there before paging began.
        const originalIds = new Set(original.map((d) => d.deliveryId));
        const originalMatches = original.filter((d) => matchesDeliveryLogFilter(filter, d)).map((d) => d.deliveryId);
        expect(ids.filter((id) => originalIds.has(id))).toEqual(originalMatches.sort().reverse());
      }),
      { numRuns: 25 },
    );
  }, 240_000);
});
