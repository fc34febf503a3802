/**
 * One page of a list spread over shards, merged newest first under a read
 * budget (docs/architecture.md#delivery-log-index). Each shard is read newest
 * first in chunks; a shard that stopped early has an unknown tail below where
 * it stopped, so only entries at or above the newest such stop (the frontier)
 * can be emitted. The page ends there, and the next one starts strictly below
 * its last entry or below the frontier: no entry is skipped or repeated, and
 * the reads never exceed the budget.
 */

/** A position in the list's order: a string that sorts as the list does (newest is greatest). */
type Position = string;

/** What one read of a shard gives. */
export interface ShardRead<T> {
  /** The entries that matched, newest first. */
  readonly matches: readonly { readonly position: Position; readonly value: T }[];
  /** Entries the read looked at (matching or not): what the budget counts. */
  readonly evaluated: number;
  /** The oldest position looked at when the shard may hold older entries; null when it holds none past the read. */
  readonly stoppedAt: Position | null;
}

/** Reads at most `limit` entries of shard `shard` strictly older than `after` (null: from the newest). */
export type ShardReader<T> = (shard: number, after: Position | null, limit: number) => Promise<ShardRead<T>>;

/** A merged page. */
export interface MergedPage<T> {
  /** At most `limit` entries, newest first. */
  readonly entries: { readonly position: Position; readonly value: T }[];
  /** Where the next page starts (strictly older); null when every shard is exhausted. */
  readonly next: Position | null;
  /** Entries the page looked at, never more than the budget. */
  readonly evaluated: number;
}

/** Options of {@link mergeNewestFirst}. */
export interface MergeOptions {
  readonly shards: number;
  readonly limit: number;
  /** Most entries to evaluate; at least `shards` (every shard needs one look). */
  readonly budget: number;
  /** The previous page's `next`, or null for the first page. */
  readonly after: Position | null;
}

const MAX_ROUNDS = 64;
/** Extra entries per shard in the first round, so an even spread usually fills the page in one round. */
const SLACK = 1;

/** Newest first. Positions are distinct (an entry sits in one shard, once, and a stop is an entry's position). */
const newestFirst = (a: { readonly position: Position }, b: { readonly position: Position }): number => (a.position < b.position ? 1 : -1);

/** Reads one page (see the module comment). */
export async function mergeNewestFirst<T>(read: ShardReader<T>, options: MergeOptions): Promise<MergedPage<T>> {
  const { shards, limit } = options;
  const budget = Math.max(options.budget, shards);
  // Where each shard goes on from: the previous page's end, then where its read stopped; null once it is
  // exhausted. The first round reads every shard, so from then on null means exhausted only.
  const from = Array.from({ length: shards }, (): Position | null => options.after);
  // The shards that may hold older entries, newest stop first: the first one's stop is the frontier.
  const open = () => from.flatMap((position, shard) => (position === null ? [] : [{ shard, position }])).sort(newestFirst);
  const found: { position: Position; value: T }[] = [];
  let evaluated = 0;
  // First round: every shard, enough that an even spread fills the page plus one (to know a next page exists).
  let chunk = Math.min(Math.ceil((limit + 1) / shards) + SLACK, Math.floor(budget / shards));
  let toRead = from.map((position, shard) => ({ shard, position }));

  for (let round = 1; toRead.length > 0; round++) {
    const reads = await Promise.all(toRead.map(async ({ shard, position }) => ({ shard, out: await read(shard, position, chunk) })));
    for (const { shard, out } of reads) {
      evaluated += out.evaluated;
      found.push(...out.matches);
      from[shard] = out.stoppedAt;
    }
    found.sort(newestFirst);
    // Next: the shards that hold the page back. With more than `limit` matches found, those stopped
    // above the (limit+1)-th (none once the page is full); otherwise the newer-stopped half, which
    // lowers the frontier most per read.
    const threshold = found[limit]?.position;
    const stopped = open();
    const blocking =
      threshold === undefined ? stopped.slice(0, Math.ceil(stopped.length / 2)) : stopped.filter((s) => s.position > threshold);
    // The budget ends the rounds: as many shards as entries are left, the newest-stopped first, then none.
    // The cap guards against a reader that makes no progress.
    const remaining = budget - evaluated;
    toRead = round < MAX_ROUNDS ? blocking.slice(0, Math.max(0, remaining)) : [];
    // An equal share of what is left: at least one entry, since no more shards read on than entries are left.
    chunk = Math.min(chunk, Math.floor(remaining / toRead.length));
  }

  const frontier = open()[0]?.position ?? null;
  const page = found.filter((e) => frontier === null || e.position >= frontier);
  if (page.length > limit) {
    const entries = page.slice(0, limit);
    return { entries, next: entries[limit - 1]!.position, evaluated };
  }
  return { entries: page, next: frontier, evaluated };
}
