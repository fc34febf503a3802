/**
 * The contract's input refinements and transforms as plain named functions, free of zod, so the
 * zod schemas use them and the code generated from those schemas (lambdas/generated/) imports
 * the same functions instead of carrying zod (docs/architecture.md#one-contract).
 */
import { DELIVERY_STATUSES } from './delivery-statuses';

/**
 * zod's `z.iso.datetime({ offset: true })` and `z.iso.date()` patterns, copied so no Lambda needs
 * zod to check an instant; test/contract/input-validation.test.ts asserts they still equal zod's.
 */
export const ISO_DATETIME_OFFSET =
  /^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))T(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|([+-](?:[01]\d|2[0-3]):[0-5]\d)))$/;
export const ISO_DATE =
  /^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))$/;

/**
 * {@link ISO_DATETIME_OFFSET} or {@link ISO_DATE}, as one pattern: the `since`/`until` filters
 * declare it, so the OpenAPI document states exactly what the server accepts.
 */
export const ISO_INSTANT_OR_DATE = new RegExp(`^(?:${ISO_DATETIME_OFFSET.source.slice(1, -1)}|${ISO_DATE.source.slice(1, -1)})$`);

/** No value repeats. */
export function distinctItems(items: readonly unknown[]): boolean {
  return new Set(items).size === items.length;
}

/** An ISO 8601 date-time with `Z` or an offset. */
export function isInstant(value: string): boolean {
  return ISO_DATETIME_OFFSET.test(value);
}

/** Milliseconds of an instant {@link ISO_INSTANT_OR_DATE} accepts (a bare date is midnight UTC). */
export function instantMs(value: string): number {
  return Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
}

/** One or more delivery statuses, comma-separated. */
export function isDeliveryStatusList(value: string): boolean {
  return value.split(',').every((s) => (DELIVERY_STATUSES as readonly string[]).includes(s.trim()));
}

/** `since` is not after `until` (either may be absent), on instants or dates; a value that does not read as one is another rule's issue. */
export function sinceNotAfterUntil(range: { since?: string; until?: string }): boolean {
  return range.since === undefined || range.until === undefined || !(instantMs(range.since) > instantMs(range.until));
}

/** `since` is not after `until` (which may be absent), on date-times as `Date.parse` reads them. */
export function sinceNotAfterUntilInstants(range: { since: string; until?: string }): boolean {
  return range.until === undefined || !(Date.parse(range.since) > Date.parse(range.until));
}
