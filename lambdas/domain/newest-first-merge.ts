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

const newest = (a: Position, b: Position) => (a > b ? a : b);

/** Reads one page (see the module comment). */
export async function mergeNewestFirst<T>(read: ShardReader<T>, options: MergeOptions): Promise<MergedPage<T>> {
  const { shards, limit } = options;
  const budget = Math.max(options.budget, shards);
  const state = Array.from({ length: shards }, () => ({ after: options.after, done: false }));
  const found: { position: Position; value: T }[] = [];
  let evaluated = 0;
  // First round: every shard, enough that an even spread fills the page plus one (to know a next page exists).
  let chunk = Math.max(1, Math.min(Math.ceil((limit + 1) / shards) + SLACK, Math.floor(budget / shards)));
  let toRead = state.map((_, i) => i);

  const frontier = (): Position | null => {
    let f: Position | null = null;
    for (const s of state) if (!s.done && s.after !== null) f = f === null ? s.after : newest(f, s.after);
    return f;
  };
  const emittable = () => {
    const f = frontier();
    return found
      .filter((e) => f === null || e.position >= f)
      .sort((a, b) => (a.position < b.position ? 1 : a.position > b.position ? -1 : 0));
  };

  // The budget ends the rounds; the cap guards against a reader that makes no progress.
  for (let round = 0; toRead.length > 0 && round < MAX_ROUNDS; round++) {
    const reads = await Promise.all(toRead.map(async (i) => ({ i, out: await read(i, state[i]!.after, chunk) })));
    for (const { i, out } of reads) {
      evaluated += out.evaluated;
      found.push(...out.matches);
      state[i] = { after: out.stoppedAt ?? state[i]!.after, done: out.stoppedAt === null };
    }
    if (emittable().length > limit) break;
    const open = state.map((s, i) => ({ ...s, i })).filter((s) => !s.done);
    const remaining = budget - evaluated;
    if (open.length === 0 || remaining <= 0) break;
    // Next: the shards that hold the page back. With more than `limit` matches found, those stopped
    // above the (limit+1)-th; otherwise the newer-stopped half, which lowers the frontier most per read.
    const sorted = [...found].sort((a, b) => (a.position < b.position ? 1 : -1));
    const threshold = sorted.length > limit ? sorted[limit]!.position : null;
    const byStop = open.sort((a, b) => ((a.after ?? '') < (b.after ?? '') ? 1 : -1));
    const blocking =
      threshold !== null ? byStop.filter((s) => s.after !== null && s.after > threshold) : byStop.slice(0, Math.ceil(byStop.length / 2));
    if (blocking.length === 0) break;
    const fits = Math.floor(remaining / blocking.length);
    toRead = (fits >= 1 ? blocking : blocking.slice(0, remaining)).map((s) => s.i);
    chunk = Math.max(1, Math.min(chunk, fits));
  }

  const page = emittable();
  if (page.length > limit) {
    const entries = page.slice(0, limit);
    return { entries, next: entries[entries.length - 1]!.position, evaluated };
  }
  return { entries: page, next: frontier(), evaluated };
}
