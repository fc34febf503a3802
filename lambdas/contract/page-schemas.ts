/**
 * Pagination's zod schemas (docs/behaviour.md#pagination): the page query of every list and the
 * page of items. The numbers and the clamp they apply are zod-free, in `pagination.ts`.
 */
import { z } from 'zod';
import { PAGE_LIMIT, clampLimit } from './pagination';

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

/** A page of `item`: `items` and `nextCursor` (null on the last page). */
export function pageOf<T extends z.ZodType>(item: T, id: string) {
  return z
    .object({
      items: z.array(item),
      nextCursor: z.string().nullable().meta({
        description:
          'Pass as `cursor` for the next page; null on the last page. A page may hold fewer than `limit` items (it ends early before the 6 MB response limit): follow `nextCursor` until it is null.',
      }),
    })
    .meta({ id });
}
