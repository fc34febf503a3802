/**
 * Pagination's zod schemas (docs/behaviour.md#pagination): the page query of every list and the
 * page of items. The numbers and the clamp they apply are zod-free, in `pagination.ts`.
 */
import { z } from 'zod';
import { PAGE_LIMIT, clampLimit } from './pagination';

/** Query of every list operation. */
export const PageQuerySchema = z.object({
  // Any number is accepted and clamped, so the schema states no bounds: a generated client that
  // enforced [min, max] would refuse values the server takes (clampLimit's result is always an
  // integer in range, so nothing is checked after it).
  limit: z
    .preprocess(clampLimit, z.number())
    .optional()
    .meta({
      description: `Page size; defaults to ${PAGE_LIMIT.default}. Any integer is accepted and clamped into [${PAGE_LIMIT.min}, ${PAGE_LIMIT.max}]: below ${PAGE_LIMIT.min} reads as ${PAGE_LIMIT.min}, above ${PAGE_LIMIT.max} as ${PAGE_LIMIT.max} (never an error).`,
      example: PAGE_LIMIT.default,
      param: { schema: { type: 'integer', default: PAGE_LIMIT.default } },
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
