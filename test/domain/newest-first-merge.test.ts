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

/**
 * Shards written as two-digit positions, newest anywhere in the string ('-' marks an entry that
 * does not match), read through a reader that records each read as `shard<after×limit` (∞: from
 * the newest), so a test pins which shards the merge reads, from where and how far.
 */
function recordingShards(layout: readonly string[]): { read: ShardReader<Entry>; reads: string[] } {
  const shards = layout.map((s) =>
    s
      .split(' ')
      .filter(Boolean)
      .map((t) => (t.startsWith('-') ? { position: t.slice(1), match: false } : { position: t, match: true })),
  );
  const inner = memoryShards(shards);
  const reads: string[] = [];
  return {
    reads,
    read: (i, after, limit) => {
      reads.push(`${i}<${after ?? '∞'}×${limit}`);
      return inner(i, after, limit);
    },
  };
}

async function pageOf(layout: readonly string[], options: { limit: number; budget: number; after?: string | null }) {
  const { read, reads } = recordingShards(layout);
  const page = await mergeNewestFirst(read, {
    shards: layout.length,
    limit: options.limit,
    budget: options.budget,
    after: options.after ?? null,
  });
  return { entries: page.entries.map((e) => e.position), next: page.next, evaluated: page.evaluated, reads };
}

/** Three uneven shards and an empty one. */
const UNEVEN = ['99 90 80 70 60 50 40', '98 30 20 10', '97 96 95 94 93 92 91 89', ''];

describe('mergeNewestFirst read plan', () => {
  it('reads every shard once, (limit+1)/shards + 1 deep, and stops when that fills the page', async () => {
    expect(await pageOf(UNEVEN, { limit: 3, budget: 40 })).toEqual({
      entries: ['99', '98', '97'],
      next: '97',
      evaluated: 6,
      reads: ['0<∞×2', '1<∞×2', '2<∞×2', '3<∞×2'],
    });
  });

  it('reads on only the shard that stopped above the (limit+1)-th match found', async () => {
    // Round one finds nine matches down to 20; the seventh newest is 80, and only shard 2 stopped above it (at 95).
    expect(await pageOf(UNEVEN, { limit: 6, budget: 40 })).toEqual({
      entries: ['99', '98', '97', '96', '95', '94'],
      next: '94',
      evaluated: 12,
      reads: ['0<∞×3', '1<∞×3', '2<∞×3', '3<∞×3', '2<95×3'],
    });
  });

  it('under a tight budget, reads one entry of the newer-stopped half of the shards per round, and ends at the frontier', async () => {
    // Budget 7 over 4 shards: one entry each; then shards 0 and 1 (stopped at 99 and 98, the newer half of
    // 99 98 97); then 2 and 0; the budget is spent with shard 2 stopped at 96, the frontier.
    expect(await pageOf(UNEVEN, { limit: 6, budget: 7 })).toEqual({
      entries: ['99', '98', '97', '96'],
      next: '96',
      evaluated: 7,
      reads: ['0<∞×1', '1<∞×1', '2<∞×1', '3<∞×1', '0<99×1', '1<98×1', '2<97×1', '0<90×1'],
    });
  });

  it('starts every shard strictly below the previous page', async () => {
    expect(await pageOf(UNEVEN, { limit: 3, budget: 40, after: '93' })).toEqual({
      entries: ['92', '91', '90'],
      next: '90',
      evaluated: 7,
      reads: ['0<93×2', '1<93×2', '2<93×2', '3<93×2', '2<91×2'],
    });
  });

  it('gives every shard one look even when the budget is smaller, and spends what is left of that', async () => {
    expect(await pageOf(['05 04', ''], { limit: 5, budget: 1 })).toEqual({
      entries: ['05', '04'],
      next: null,
      evaluated: 2,
      reads: ['0<∞×1', '1<∞×1', '0<05×1'],
    });
  });

  it('counts the entries that do not match against the budget, and reads on under the frontier', async () => {
    expect(await pageOf(['-99 -98 -97 96 -95 94', '93 -92 91 90 89'], { limit: 2, budget: 20 })).toEqual({
      entries: ['96', '94'],
      next: '94',
      evaluated: 9,
      reads: ['0<∞×3', '1<∞×3', '0<97×3'],
    });
  });

  it('reads the shards holding the page back until it fills', async () => {
    expect(await pageOf(['99 98 97 96 95 94 93 92 91 90', '50 40 30 20 10', '89 88 87 86 85 84 83 82'], { limit: 8, budget: 30 })).toEqual({
      entries: ['99', '98', '97', '96', '95', '94', '93', '92'],
      next: '92',
      evaluated: 22,
      reads: ['0<∞×4', '1<∞×4', '2<∞×4', '0<96×4', '2<86×4', '0<92×4'],
    });
  });

  it('with less budget left than shards to read, reads only as many shards as entries are left, the newest-stopped first', async () => {
    // Six shards stopped at 99 … 94 after one entry each; the newer half is three shards, but two entries are left.
    expect(await pageOf(['99 89 79', '98 88 78', '97 87 77', '96 86 76', '95 85 75', '94 84 74'], { limit: 8, budget: 8 })).toEqual({
      entries: ['99', '98', '97'],
      next: '97',
      evaluated: 8,
      reads: ['0<∞×1', '1<∞×1', '2<∞×1', '3<∞×1', '4<∞×1', '5<∞×1', '0<99×1', '1<98×1'],
    });
  });

  it('splits what is left of the budget evenly among the shards it reads on, never more', async () => {
    // Round one reads 3 of each of four shards (12 of 17) and finds one match, so the newer-stopped half
    // (shards 0 and 1) reads on with the 5 left: 2 each, not the 3 of round one (that would be 18).
    const layout = ['-99 -95 -91 87 -83 -79', '-98 -94 -90 -86 82 -78', '-97 -93 89 -85 -81', '-96 -92 -88 -84 -80'];
    expect(await pageOf(layout, { limit: 4, budget: 17 })).toEqual({
      entries: ['89'],
      next: '88',
      evaluated: 17,
      reads: ['0<∞×3', '1<∞×3', '2<∞×3', '3<∞×3', '0<91×2', '1<90×2', '2<89×1'],
    });
  });

  it('lists an exhausted list newest first across shards, whatever the shards’ order, with no next page', async () => {
    expect(await pageOf(['a b', 'c d', 'e f'], { limit: 6, budget: 100 })).toEqual({
      entries: ['f', 'e', 'd', 'c', 'b', 'a'],
      next: null,
      evaluated: 6,
      reads: ['0<∞×4', '1<∞×4', '2<∞×4'],
    });
  });

  it('reads no more once a reader has spent more than the budget', async () => {
    // Shard 3 evaluates one entry more than asked: 2 + 2 + 2 + 3 of a budget of 8.
    const reads: string[] = [];
    const over: ShardReader<Entry> = async (i, after, limit) => {
      reads.push(`${i}<${after ?? '∞'}×${limit}`);
      return { matches: [], evaluated: i === 3 ? limit + 1 : limit, stoppedAt: `p${i}` };
    };
    expect(await mergeNewestFirst(over, { shards: 4, limit: 20, budget: 8, after: null })).toEqual({
      entries: [],
      next: 'p3',
      evaluated: 9,
    });
    expect(reads).toEqual(['0<∞×2', '1<∞×2', '2<∞×2', '3<∞×2']);
  });

  it('gives up after 64 rounds on a reader that makes no progress', async () => {
    const reads: (string | null)[] = [];
    const stuck: ShardReader<Entry> = async (_, after) => {
      reads.push(after);
      return { matches: [], evaluated: 0, stoppedAt: 'm' };
    };
    expect(await mergeNewestFirst(stuck, { shards: 1, limit: 5, budget: 100, after: null })).toEqual({
      entries: [],
      next: 'm',
      evaluated: 0,
    });
    expect(reads).toEqual([null, ...Array.from({ length: 63 }, () => 'm')]);
  });
});
