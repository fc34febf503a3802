/** Prefixed, time-sortable identifiers (docs/architecture.md#identifiers). */
import { ulid } from 'ulid';
import type { IdPrefix } from '../contract/ids';

/**
 * A new id: prefix + ULID whose time part is `now`, so ordering by id is
 * ordering by (createdAt, id) for rows stamped with the same clock.
 */
export function newId(prefix: IdPrefix, now: Date): string {
  return `${prefix}_${ulid(now.getTime())}`;
}
