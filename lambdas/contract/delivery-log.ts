/**
 * The workspace delivery log's published read bound and filter rule
 * (docs/behaviour.md#workspace-delivery-log): keyset pages, and at most a fixed multiple of
 * `limit` index entries read per page. Zod-free, so functions import it without zod; the query's
 * zod schema is in `delivery-log-query.ts`.
 */
export { instantMs } from './input-rules';
export type { DeliveryLogQuery } from './delivery-log-query';

/**
 * Items one page may read (index entries, and the summaries a status filter
 * checks): `perItem` × limit, at least `minimum` (the log's shards each need a
 * look before anything can be emitted, so a page of one still reads every
 * shard). Summaries read besides, for the page itself: at most `limit`.
 */
const DELIVERY_LOG_READS = { perItem: 8, minimum: 128 } as const;

/** The most items a page of `limit` reads, besides its own summaries. */
export function deliveryLogReadBudget(limit: number): number {
  return Math.max(DELIVERY_LOG_READS.perItem * limit, DELIVERY_LOG_READS.minimum);
}

/** `eventType` filter: an exact type, or a prefix of dotted words ending in `.*`. */
export const EVENT_TYPE_FILTER = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*\.(\*|[a-z][a-z0-9_]*)$/;

/** The operation's description (OpenAPI, MCP): order, filters, the read bound and what it means for a page. */
export const DELIVERY_LOG_DESCRIPTION = [
  'Pages through the delivery summaries of the whole workspace, newest first, payload included.',
  'Filters combine: `status` (comma-separated), `eventType` (exact, or a prefix ending in `.*`), `endpointId`, and `since` / `until` on `createdAt` (inclusive).',
  `Every page does bounded work: it reads at most ${DELIVERY_LOG_READS.perItem} × \`limit\` items (at least ${DELIVERY_LOG_READS.minimum}) plus the page's deliveries,`,
  'so a page of a selective filter may come back short, even empty, with a `nextCursor`: keep following `nextCursor` until it is null to see every match.',
  'A cursor is tied to the filters it was made under; with other filters, or when it does not decode, it gives an empty page.',
  "Deliveries stored before the log's index was deployed are not in it.",
].join(' ');
