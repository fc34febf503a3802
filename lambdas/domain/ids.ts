/** Prefixed, time-sortable identifiers (docs/architecture.md#identifiers). */
import { createHash } from 'node:crypto';
import { TIME_MAX, ulid, uuidToULID } from 'ulid';
import type { IdPrefix } from '../contract/ids';

/**
 * A new id: prefix + ULID whose time part is `now`, so ordering by id is
 * ordering by (createdAt, id) for rows stamped with the same clock.
 */
export function newId(prefix: IdPrefix, now: Date): string {
  return `${prefix}_${ulid(now.getTime())}`;
}

/**
 * A derived id: the same shape as {@link newId} (prefix + ULID whose time part is
 * `at`), but its 80 "random" bits are the first 80 bits of SHA-256 over `parts`,
 * so the same parts and time always give the same id. A retried producer can
 * then write put-if-absent instead of minting a second id for the same thing.
 */
export function derivedId(prefix: IdPrefix, at: Date, parts: readonly string[]): string {
  const ms = at.getTime();
  if (!Number.isInteger(ms) || ms < 0 || ms > TIME_MAX) throw new RangeError(`Not an id time: ${at.toString()}`);
  // JSON keeps the parts apart: ["a","bc"] and ["ab","c"] hash differently.
  const random = createHash('sha256').update(JSON.stringify(parts)).digest().subarray(0, 10);
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(ms, 0, 6);
  random.copy(bytes, 6);
  // 48 bits of time then 80 bits, in Crockford base32: exactly a ULID's layout.
  const hex = bytes.toString('hex');
  return `${prefix}_${uuidToULID(`${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`)}`;
}

/**
 * The delivery of one bus event to one endpoint (docs/architecture.md#publisher): time part the
 * event's time, the rest from (event id, endpoint id). A redelivered event maps to the same ids.
 */
export function eventDeliveryId(eventId: string, endpointId: string, eventTime: Date): string {
  return derivedId('whd', eventTime, ['event-delivery', eventId, endpointId]);
}
