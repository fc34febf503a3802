/**
 * Capability-URL redaction (docs/behaviour.md#url-redaction). Many receivers put a secret in
 * the URL's path or query (`https://hooks.example.com/in/3f9a…?token=…`), so an endpoint's
 * full URL is shown only to callers who may change the endpoint; everything else (read-scope
 * callers, audit entries, notifications, the service's own domain events) carries the
 * redacted form. This file is the rule's one home.
 */
import type { Permission } from '../contract/permissions';

/** What replaces the path, query and fragment of a redacted URL. */
const REDACTED_REST = '/…';

/** The permission whose holders see endpoint URLs in full (the `write` scope grants it). */
const FULL_URL_PERMISSION = 'webhook:write' as const satisfies Permission;

/**
 * The URL's scheme and host (with the port when it is not the scheme's default: WHATWG
 * `URL.host` already drops a default port), then `/…`. Always `/…`, even for a URL whose
 * path is `/` with no query: the form is uniform, so a reader can never tell from it whether
 * the URL had a secret part, and a redacted value is never mistaken for a full one.
 * User info and fragment are dropped with the rest. A value that does not parse as a URL
 * with a host (stored URLs always do) becomes `…`: nothing of it is shown.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '…';
  }
  if (!parsed.host) return '…';
  return `${parsed.protocol}//${parsed.host}${REDACTED_REST}`;
}

/** The URL as a caller holding `permissions` sees it on an endpoint resource: full with {@link FULL_URL_PERMISSION}, else redacted. */
export function urlAsSeenWith(url: string, permissions: ReadonlySet<string>): string {
  return permissions.has(FULL_URL_PERMISSION) ? url : redactUrl(url);
}
