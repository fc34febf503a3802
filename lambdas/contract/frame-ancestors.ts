/**
 * The origins allowed to frame the console (the stage setting `consoleFrameAncestors`,
 * docs/behaviour.md#the-embedded-console): one rule for what such an origin is, shared by the
 * stage's configuration (lib/config.ts), the console's Content-Security-Policy
 * (lambdas/http/page-security.ts) and any rule that trusts the same origins (a portal session's
 * `returnUrl`). The functions receive the list as JSON in `CONSOLE_FRAME_ANCESTORS`.
 *
 * Dependency-free: every bundle and the CDK app may import it.
 */

/** The most origins a stage may list: each is a word of the console's CSP header. */
export const MAX_FRAME_ANCESTORS = 50;

/** `scheme://host[:port]`, nothing after: a bracketed IPv6 literal or a DNS name / IPv4 address. */
const ORIGIN = /^(https?):\/\/(\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::(\d{1,5}))?$/;

/** Hosts that name this machine: the only ones allowed over plain http. */
function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * True when `origin` may frame the console: `https://host[:port]`, or `http://` for a loopback
 * host (a developer's page on this machine). Lower case, no path, no trailing slash, no wildcard:
 * a browser compares the framing page's origin with these words, and a `returnUrl` must match one
 * exactly.
 */
export function isFrameAncestorOrigin(origin: string): boolean {
  if (origin.length > 253) return false;
  const match = ORIGIN.exec(origin);
  if (!match) return false;
  const [, scheme, host = '', port] = match;
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return false;
  return scheme === 'https' || isLoopbackHost(host);
}

/**
 * The list a function was given in `CONSOLE_FRAME_ANCESTORS` (a JSON array of origins). Unset or
 * empty: none. A value that is not such a list, or lists one invalid origin, also gives none: a
 * misconfigured stage keeps the console unframeable rather than framed by a word it did not mean.
 */
export function frameAncestorsFrom(value: string | undefined): readonly string[] {
  if (!value) return [];
  let list: unknown;
  try {
    list = JSON.parse(value);
  } catch {
    return [];
  }
  if (!Array.isArray(list) || list.length > MAX_FRAME_ANCESTORS) return [];
  if (!list.every((item): item is string => typeof item === 'string' && isFrameAncestorOrigin(item))) return [];
  return [...new Set(list)];
}
