/**
 * docs/architecture.md#delivery-log-index: the newest-first merge of shards
 * under a read budget, as a property over in-memory shards. Paging to the end
 * returns every match exactly once, newest first, and no page evaluates more
 * than its budget.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeNewestFirst, type MergedPage, type ShardReader } from '../../lambdas/domain/newest-first-merge';

type Entry = { position: string; match: boolean };

/** A reader over sorted in-memory shards that counts what it evaluates, as DynamoDB's `Limit` does. */
function memoryShards(shards: Entry[][]): ShardReader<Entry> {
  const sorted = shards.map((s) => [...s].sort((a, b) => (a.position < b.position ? 1 : -1)));
  return async (i, after, limit) => {
    const rest = sorted[i]!.filter((e) => after === null || e.position < after);
    const taken = rest.slice(0, limit);
    return {
      matches: taken.filter((e) => e.match).map((e) => ({ position: e.position, value: e })),
      evaluated: taken.length,
      stoppedAt: rest.length > limit ? taken[taken.length - 1]!.position : null,
    };
  };
}

const scenario = fc
  .record({
    shards: fc.integer({ min: 1, max: 16 }),
    entries: fc.uniqueArray(fc.record({ position: fc.integer({ min: 0, max: 99_999 }), match: fc.boolean(), shard: fc.nat() }), {
      selector: (e) => e.position,
      maxLength: 300,
    }),
    limit: fc.integer({ min: 1, max: 25 }),
    budgetPerItem: fc.integer({ min: 1, max: 6 }),
  })
  .map((s) => ({
    ...s,
    layout: Array.from({ length: s.shards }, (_, i) =>
      s.entries.filter((e) => e.shard % s.shards === i).map((e) => ({ position: String(e.position).padStart(5, '0'), match: e.match })),
    ),
  }));

describe('mergeNewestFirst', () => {
  it('pages through every match once, newest first, within the budget of every page', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ shards, layout, limit, budgetPerItem }) => {
        const read = memoryShards(layout);
        const budget = Math.max(budgetPerItem * limit, 2 * shards);
        const seen: string[] = [];
        let after: string | null = null;
        for (let pages = 0; ; pages++) {
          expect(pages).toBeLessThan(2_000);
          const page: MergedPage<Entry> = await mergeNewestFirst(read, { shards, limit, budget, after });
          expect(page.entries.length).toBeLessThanOrEqual(limit);
          expect(page.evaluated).toBeLessThanOrEqual(budget);
          seen.push(...page.entries.map((e) => e.position));
          if (page.next === null) break;
          if (after !== null) expect(page.next < after).toBe(true);
          after = page.next;
        }
        const expected = layout
          .flat()
          .filter((e) => e.match)
          .map((e) => e.position)
          .sort()
          .reverse();
        expect(seen).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });

  it('fills a page of an unfiltered even spread in one go', async () => {
    const layout = Array.from({ length: 16 }, (_, i) =>
      Array.from({ length: 100 }, (_, j) => ({ position: String(j * 16 + i).padStart(5, '0'), match: true })),
    );
    const page = await mergeNewestFirst(memoryShards(layout), { shards: 16, limit: 50, budget: 200, after: null });
    expect(page.entries.map((e) => e.position)).toEqual(Array.from({ length: 50 }, (_, k) => String(1599 - k).padStart(5, '0')));
    expect(page.next).toBe('01550');
  });
});
