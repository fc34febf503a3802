/**
 * The delivery log's filters as rules (docs/behaviour.md#workspace-delivery-log):
 * a normalized filter, the id range its `since` / `until` cover, whether a
 * summary matches it, and cursors tied to it by a fingerprint. No I/O.
 */
import { createHash } from 'node:crypto';
import { encodeTime, TIME_MAX } from 'ulid';
import { instantMs, type DeliveryLogQuery } from '../contract/delivery-log';
import { idPattern } from '../contract/ids';
import type { DeliveryStatus } from '../contract/schemas';
import { decodeCursor, encodeCursor } from './cursor';

/** A filter of the log, normalized: statuses sorted and unique, instants as epoch ms. */
export interface DeliveryLogFilter {
  readonly statuses: readonly DeliveryStatus[] | null;
  /** Exact type, or `{prefix}` for a `prefix.*` pattern (prefix ends with the dot). */
  readonly eventType: { readonly exact: string } | { readonly prefix: string } | null;
  readonly endpointId: string | null;
  /** Only the deliveries of this event (read by the event's own index partition). */
  readonly eventId: string | null;
  readonly sinceMs: number | null;
  readonly untilMs: number | null;
}

/** The filter of a parsed query. */
export function deliveryLogFilter(
  query: Pick<DeliveryLogQuery, 'status' | 'eventType' | 'endpointId' | 'eventId' | 'since' | 'until'>,
): DeliveryLogFilter {
  const statuses =
    query.status === undefined ? null : ([...new Set(query.status.split(',').map((s) => s.trim()))].sort() as DeliveryStatus[]);
  const eventType =
    query.eventType === undefined
      ? null
      : query.eventType.endsWith('.*')
        ? { prefix: query.eventType.slice(0, -1) }
        : { exact: query.eventType };
  return {
    statuses,
    eventType,
    endpointId: query.endpointId ?? null,
    eventId: query.eventId ?? null,
    sinceMs: query.since === undefined ? null : instantMs(query.since),
    untilMs: query.until === undefined ? null : instantMs(query.until),
  };
}

/** True when a summary (its status, event type, event, endpoint and creation time) passes the filter. */
export function matchesDeliveryLogFilter(
  filter: DeliveryLogFilter,
  d: { status: string; eventType: string; eventId: string | null; endpointId: string; createdAt: string },
): boolean {
  if (filter.eventId !== null && d.eventId !== filter.eventId) return false;
  if (filter.statuses && !(filter.statuses as readonly string[]).includes(d.status)) return false;
  if (
    filter.eventType &&
    ('exact' in filter.eventType ? d.eventType !== filter.eventType.exact : !d.eventType.startsWith(filter.eventType.prefix))
  )
    return false;
  if (filter.endpointId !== null && d.endpointId !== filter.endpointId) return false;
  const created = Date.parse(d.createdAt);
  if (filter.sinceMs !== null && created < filter.sinceMs) return false;
  if (filter.untilMs !== null && created > filter.untilMs) return false;
  return true;
}

const clampTime = (ms: number) => Math.min(TIME_MAX, Math.max(0, ms));

/**
 * The delivery ids (inclusive bounds) whose creation time is inside the
 * filter's `since` / `until`: a delivery id is `whd_` + a ULID whose time part is
 * its `createdAt` (docs/architecture.md#identifiers), so the time filter is an id range.
 */
export function filterIdBounds(filter: DeliveryLogFilter): { low: string; high: string } {
  return {
    low: `whd_${encodeTime(clampTime(filter.sinceMs ?? 0), 10)}${'0'.repeat(16)}`,
    high: `whd_${encodeTime(clampTime(filter.untilMs ?? TIME_MAX), 10)}${'Z'.repeat(16)}`,
  };
}

/** A short digest of the filter, so a cursor made under other filters addresses no position. */
export function deliveryLogFingerprint(filter: DeliveryLogFilter): string {
  return createHash('sha256').update(JSON.stringify(filter)).digest('base64url').slice(0, 16);
}

const DELIVERY_ID = idPattern('whd');

/** A log cursor: the position (a delivery id; the next page starts strictly older) under this filter. */
export function encodeDeliveryLogCursor(filter: DeliveryLogFilter, position: string): string {
  return encodeCursor({ sortKey: deliveryLogFingerprint(filter), id: position });
}

/** The position of a cursor made under this filter; null for anything else (an empty page). */
export function decodeDeliveryLogCursor(filter: DeliveryLogFilter, cursor: string): string | null {
  const decoded = decodeCursor(cursor, DELIVERY_ID);
  return decoded && decoded.sortKey === deliveryLogFingerprint(filter) ? decoded.id : null;
}
