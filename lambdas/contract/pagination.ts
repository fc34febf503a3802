/**
 * Pagination (docs/behaviour.md#pagination): `limit` defaults to 50 and is clamped into
 * [1, 200], never an error; `cursor` is an opaque keyset position. Zod-free; the page query's
 * zod schema is in `page-schemas.ts`.
 */
/** Page size bounds and default. */
export const PAGE_LIMIT = { default: 50, min: 1, max: 200 } as const;

/** Clamps any query value into a page size; unparsable values take the default. */
export function clampLimit(raw: unknown): number {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
  if (!Number.isFinite(n)) return PAGE_LIMIT.default;
  return Math.min(PAGE_LIMIT.max, Math.max(PAGE_LIMIT.min, Math.trunc(n)));
}

/** A page as operations return it. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}
