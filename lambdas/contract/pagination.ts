/**
 * Pagination (docs/behaviour.md#pagination): `limit` defaults to 50 and is clamped into
 * [1, 200], never an error; `cursor` is an opaque keyset position. A page may also end early by
 * bytes, before the serialized Lambda response would pass Lambda's limit ({@link fitPage}).
 * Zod-free; the page query's zod schema is in `page-schemas.ts`.
 */
import { LAMBDA_SYNC_PAYLOAD_BYTES } from './aws-limits';

/** Page size bounds and default. */
export const PAGE_LIMIT = { default: 50, min: 1, max: 200 } as const;

/** Clamps any query value into a page size; unparsable values take the default. */
export function clampLimit(raw: unknown): number {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
  if (!Number.isFinite(n)) return PAGE_LIMIT.default;
  return Math.min(PAGE_LIMIT.max, Math.max(PAGE_LIMIT.min, Math.trunc(n)));
}

/** The key of a page's {@link Page.[RESUME_AFTER]}: a symbol, so no serialization ever carries it. */
export const RESUME_AFTER = Symbol('resumeAfter');

/** A page as operations return it. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
  /**
   * The cursor that continues right after `items[index]`, so a surface can end the page there
   * ({@link fitPage}). A list that sets it can be cut short; `{...page, items}` keeps it.
   */
  readonly [RESUME_AFTER]?: (index: number) => string;
}

/**
 * Bytes of the serialized Lambda response a page may fill: Lambda's synchronous response limit
 * less 64 KiB for what a surface's measure leaves out (the MCP answer's HTTP headers).
 */
export const PAGE_RESPONSE_BUDGET_BYTES = LAMBDA_SYNC_PAYLOAD_BYTES - 64 * 1024;

function isResumablePage(value: unknown): value is Page<unknown> & { readonly [RESUME_AFTER]: (index: number) => string } {
  return typeof value === 'object' && value !== null && typeof (value as { [RESUME_AFTER]?: unknown })[RESUME_AFTER] === 'function';
}

/**
 * The one rule of a page too large for its response (docs/behaviour.md#pagination): keep the
 * longest prefix of its items whose serialized response fits `budget`, and continue right after
 * the last item kept, so no item is skipped or repeated. `sizeOf` is the surface's own
 * serialization of the whole Lambda response carrying a result (escaping included, so a payload
 * of quotes or control characters counts what it really costs). Anything but a resumable page,
 * and a page that fits, is returned as it is; a page always keeps its first item.
 */
export function fitPage<R>(result: R, sizeOf: (result: R) => number, budget: number = PAGE_RESPONSE_BUDGET_BYTES): R {
  if (!isResumablePage(result) || result.items.length <= 1 || sizeOf(result) <= budget) return result;
  const page = result;
  const resume = page[RESUME_AFTER];
  const sized = (items: unknown[], nextCursor: string | null) => sizeOf({ ...page, items, nextCursor });
  // A serialization is the frame plus each item's own bytes plus a separator between two items:
  // each item is measured alone, so the cost of a prefix is known without serializing it.
  const probeCursor = resume(0);
  const empty = sized([], probeCursor);
  const first = page.items[0];
  const separator = sized([first, first], probeCursor) - 2 * sized([first], probeCursor) + empty;
  let kept = 1;
  let bytes = sized([first], probeCursor) - empty;
  while (kept < page.items.length) {
    const next = bytes + separator + sized([page.items[kept]], probeCursor) - empty;
    if (sized([], resume(kept)) + next > budget) break;
    bytes = next;
    kept++;
  }
  // The measure is exact, so this only confirms it; it never returns a page over the budget it can cut.
  let fitted = { ...page, items: page.items.slice(0, kept), nextCursor: resume(kept - 1) } as R;
  while (kept > 1 && sizeOf(fitted) > budget) {
    kept--;
    fitted = { ...page, items: page.items.slice(0, kept), nextCursor: resume(kept - 1) };
  }
  return fitted;
}
