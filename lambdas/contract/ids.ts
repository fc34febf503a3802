/**
 * The service's identifiers as the contract publishes them
 * (docs/architecture.md#identifiers): a prefix, an underscore and a ULID
 * (26 characters of Crockford base32, time-sortable).
 */

/** Prefixes of the service's identifiers. */
export type IdPrefix = 'whe' | 'whd' | 'tok' | 'aud' | 'ntf' | 'mem' | 'whj' | 'wps' | 'wcs';

/** The exact shape of an id with `prefix`. */
export function idPattern(prefix: IdPrefix): RegExp {
  return new RegExp(`^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`);
}
