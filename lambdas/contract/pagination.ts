/**
 * Pagination (docs/behaviour.md#pagination): `limit` defaults to 50 and is clamped into
 * [1, 200], never an error; `cursor` is an opaque keyset position.
 */
import { z } from 'zod';

/** Page size bounds and default. */
export const PAGE_LIMIT = { default: 50, min: 1, max: 200 } as const;

/** Clamps any query value into a page size; unparsable values take the default. */
export function clampLimit(raw: unknown): number {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
  if (!Number.isFinite(n)) return PAGE_LIMIT.default;
  return Math.min(PAGE_LIMIT.max, Math.max(PAGE_LIMIT.min, Math.trunc(n)));
}

/** Query of every list operation. */
export const PageQuerySchema = z.object({
  limit: z
    .preprocess(clampLimit, z.number().int().min(PAGE_LIMIT.min).max(PAGE_LIMIT.max))
    .optional()
    .meta({
      description: `Page size; defaults to ${PAGE_LIMIT.default} and is clamped into [${PAGE_LIMIT.min}, ${PAGE_LIMIT.max}] (never an error).`,
      example: PAGE_LIMIT.default,
      param: { schema: { type: 'integer', minimum: PAGE_LIMIT.min, maximum: PAGE_LIMIT.max, default: PAGE_LIMIT.default } },
    }),
  cursor: z
    .string()
    .max(2048)
    .optional()
    .meta({ description: 'Opaque keyset position from a previous page; a cursor that does not decode gives an empty page.' }),
});

/** Parsed page query. */
export type PageQuery = z.infer<typeof PageQuerySchema>;

/** A page of `item`: `items` and `nextCursor` (null on the last page). */
export function pageOf<T extends z.ZodType>(item: T, id: string) {
  return z
    .object({
      items: z.array(item),
      nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
    })
    .meta({ id });
}

/** A page as operations return it. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}
