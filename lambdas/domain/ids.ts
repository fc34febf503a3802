/** Prefixed, time-sortable identifiers (DESIGN §4). */
import { ulid } from 'ulid';

/** Prefixes of the service's identifiers. */
export type IdPrefix = 'whe' | 'whd' | 'tok' | 'aud' | 'ntf' | 'mem';

/**
 * A new id: prefix + ULID whose time part is `now`, so ordering by id is
 * ordering by (createdAt, id) for rows stamped with the same clock.
 */
export function newId(prefix: IdPrefix, now: Date): string {
  return `${prefix}_${ulid(now.getTime())}`;
}
