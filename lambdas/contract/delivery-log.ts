/**
 * The workspace delivery log's query and its published read bound
 * (docs/behaviour.md#workspace-delivery-log): filters that combine, keyset
 * pages, and at most a fixed multiple of `limit` index entries read per page.
 */
import { z } from 'zod';
import { PageQuerySchema } from './pagination';
import { DeliveryStatusSchema, EndpointIdSchema } from './schemas';

/**
 * Items one page may read (index entries, and the summaries a status filter
 * checks): `perItem` × limit, at least `minimum` (the log's shards each need a
 * look before anything can be emitted, so a page of one still reads every
 * shard). Summaries read besides, for the page itself: at most `limit`.
 */
export const DELIVERY_LOG_READS = { perItem: 8, minimum: 128 } as const;

/** The most items a page of `limit` reads, besides its own summaries. */
export function deliveryLogReadBudget(limit: number): number {
  return Math.max(DELIVERY_LOG_READS.perItem * limit, DELIVERY_LOG_READS.minimum);
}

const STATUSES = DeliveryStatusSchema.options;

/** `eventType` filter: an exact type, or a prefix of dotted words ending in `.*`. */
export const EVENT_TYPE_FILTER = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*\.(\*|[a-z][a-z0-9_]*)$/;

/** An ISO 8601 instant with `Z` or an offset, or a date (midnight UTC). */
const instant = (description: string, example: string) =>
  z
    .string()
    .max(64)
    .refine((v) => z.iso.datetime({ offset: true }).safeParse(v).success || z.iso.date().safeParse(v).success, {
      message: 'must be an ISO 8601 date-time with Z or an offset (e.g. 2026-11-25T12:00:00Z) or a date (2026-11-25)',
    })
    .optional()
    .meta({ description, example });

/** Query of the delivery log: the page query and the filters. */
export const DeliveryLogQuerySchema = PageQuerySchema.extend({
  status: z
    .string()
    .max(200)
    .refine((v) => v.split(',').every((s) => (STATUSES as readonly string[]).includes(s.trim())), {
      message: `must be one or more of ${STATUSES.join(', ')}, comma-separated`,
    })
    .optional()
    .meta({ description: `Only these statuses: one or more of ${STATUSES.map((s) => `\`${s}\``).join(', ')}, comma-separated.`, example: 'failed,dead_lettered' }),
  eventType: z
    .string()
    .max(200)
    .regex(EVENT_TYPE_FILTER, 'must be an event type (order.shipped) or a prefix ending in .* (order.*)')
    .optional()
    .meta({ description: 'Only this event type (`order.shipped`), or every type under a prefix (`order.*`).', example: 'order.*' }),
  endpointId: EndpointIdSchema.optional().meta({ description: 'Only deliveries to this endpoint.' }),
  since: instant('Only deliveries created at or after this instant: ISO 8601 with `Z` or an offset, or a date (midnight UTC); millisecond precision.', '2026-11-25T00:00:00Z'),
  until: instant('Only deliveries created at or before this instant: ISO 8601 with `Z` or an offset, or a date (midnight UTC); millisecond precision.', '2026-11-25T23:59:59.999Z'),
}).superRefine((q, ctx) => {
  if (q.since !== undefined && q.until !== undefined && instantMs(q.since) > instantMs(q.until)) {
    ctx.addIssue({ code: 'custom', path: ['since'], message: 'must not be after until' });
  }
});

/** Parsed query of the delivery log. */
export type DeliveryLogQuery = z.infer<typeof DeliveryLogQuerySchema>;

/** Milliseconds of an instant the schema accepted (a bare date is midnight UTC). */
export function instantMs(value: string): number {
  return Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
}

/** The operation's description (OpenAPI, MCP): order, filters, the read bound and what it means for a page. */
export const DELIVERY_LOG_DESCRIPTION = [
  'Pages through the delivery summaries of the whole workspace, newest first, payload included.',
  'Filters combine: `status` (comma-separated), `eventType` (exact, or a prefix ending in `.*`), `endpointId`, and `since` / `until` on `createdAt` (inclusive).',
  `Every page does bounded work: it reads at most ${DELIVERY_LOG_READS.perItem} × \`limit\` items (at least ${DELIVERY_LOG_READS.minimum}) plus the page's deliveries,`,
  'so a page of a selective filter may come back short, even empty, with a `nextCursor`: keep following `nextCursor` until it is null to see every match.',
  'A cursor is tied to the filters it was made under; with other filters, or when it does not decode, it gives an empty page.',
  'Deliveries stored before the log\'s index was deployed are not in it.',
].join(' ');
