/**
 * Webhook endpoint URL validation: the SSRF guard applied when an endpoint is
 * registered (static checks, no DNS) and, through {@link isPublicAddress}, to
 * every address a host resolves to before a delivery connects.
 *
 * The WHATWG `URL` parser already folds most IPv4 spellings (decimal, octal,
 * hex, short forms, full-width digits, percent-encoding) into a dotted quad;
 * the checks below rely on that but re-check numeric-looking hosts themselves
 * so that a parser quirk cannot turn an IP literal into a "domain name".
 */
import ipaddr from 'ipaddr.js';

/** The rule a refused URL broke. */
export type UrlRule = 'malformed' | 'scheme' | 'credentials' | 'localhost' | 'single_label' | 'ip_not_public' | 'too_long';

/** Options of {@link checkWebhookUrl} and {@link isPublicAddress}. */
export interface UrlCheckOptions {
  /**
   * Local-development switch: allow loopback targets (localhost, 127.0.0.0/8,
   * ::1) over http or https; every other rule still holds.
   * @default false
   */
  readonly allowLoopback?: boolean;
}

/** Outcome of {@link checkWebhookUrl}: the parsed URL, or the broken rule and a human sentence. */
export type UrlCheck = { ok: true; url: URL } | { ok: false; rule: UrlRule; detail: string };

/** Longest URL accepted, measured on both the input and the normalized href. */
const MAX_URL_LENGTH = 2048;

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** An address's ipaddr.js range, plus the IPv4 address it embeds when it is a transition form. */
interface Classification {
  readonly range: string;
  readonly zoned: boolean;
  readonly embedded?: { readonly address: string; readonly range: string };
}

/**
 * Checks a webhook URL against the endpoint URL rules (docs/architecture.md#url-guard; no DNS): https only, no
 * credentials, no localhost or single-label host, no IP literal outside public
 * unicast space (in any spelling), at most 2048 characters. Never throws.
 */
export function checkWebhookUrl(raw: string, options: UrlCheckOptions = {}): UrlCheck {
  try {
    return check(raw, options.allowLoopback === true);
  } catch {
    // Belt and braces: the contract is "never throw", whatever the input.
    return fail('malformed', 'URL could not be parsed');
  }
}

/**
 * Classifies one resolved or literal IP address: true when it is a public
 * unicast address (embedded IPv4 forms checked too). With allowLoopback,
 * loopback addresses also pass. Anything that does not parse, and any IPv4
 * that is not in canonical dotted-decimal form, is not public.
 */
export function isPublicAddress(address: string, options: UrlCheckOptions = {}): boolean {
  try {
    if (typeof address !== 'string') return false;
    const text = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
    if (!isCanonicalAddress(text)) return false;
    return isAllowed(classify(ipaddr.parse(text)), options.allowLoopback === true);
  } catch {
    return false;
  }
}

/**
 * True for an IPv4 address in canonical dotted decimal (four parts, no leading zeros), or an IPv6
 * address whose embedded IPv4 tail (if any) is. Other IPv4 spellings are ambiguous: ipaddr.js reads
 * `8.8.8.010` as octal (8.8.8.8) but `::ffff:8.8.8.010` as decimal, and other parsers (inet_aton,
 * inet_pton) disagree again, so an address string that is not canonical is never trusted.
 */
function isCanonicalAddress(text: string): boolean {
  if (!text.includes(':')) return ipaddr.IPv4.isValidFourPartDecimal(text);
  if (!ipaddr.IPv6.isValid(text)) return false;
  const tail = text.slice(text.lastIndexOf(':') + 1).split('%')[0]!;
  return !tail.includes('.') || ipaddr.IPv4.isValidFourPartDecimal(tail);
}

function check(raw: string, allowLoopback: boolean): UrlCheck {
  if (typeof raw !== 'string') return fail('malformed', 'URL must be a string');
  if (raw.length > MAX_URL_LENGTH) return tooLong(raw.length);
  // The URL parser silently strips tabs/newlines and surrounding spaces; refuse
  // them instead so the stored URL is exactly what the user typed.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0020\u007f]/.test(raw)) {
    return fail('malformed', 'URL must not contain whitespace or control characters');
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail('malformed', 'URL could not be parsed');
  }
  // IDNs grow when converted to punycode.
  if (url.href.length > MAX_URL_LENGTH) return tooLong(url.href.length);

  const host = url.hostname;
  if (url.protocol !== 'https:') {
    const devHttp = url.protocol === 'http:' && allowLoopback && isLoopbackHost(host);
    if (!devHttp) {
      return fail(
        'scheme',
        allowLoopback
          ? `URL must use https (got ${url.protocol}; http is allowed only for loopback hosts)`
          : `URL must use https (got ${url.protocol})`,
      );
    }
  }
  if (url.username !== '' || url.password !== '') {
    return fail('credentials', 'URL must not contain credentials');
  }
  if (url.port === '0') return fail('malformed', 'URL port 0 is not a valid destination port');

  const refused = checkHost(host, allowLoopback);
  return refused ?? { ok: true, url };
}

/** Host rules, on the parser's (lower-cased, punycoded) hostname; undefined when the host passes. */
function checkHost(host: string, allowLoopback: boolean): UrlCheck | undefined {
  if (host === '') return fail('malformed', 'URL must have a host');

  if (host.startsWith('[')) {
    const inner = host.slice(1, -1);
    if (!ipaddr.IPv6.isValid(inner)) return fail('malformed', `host ${host} is not a valid IPv6 address`);
    return checkIp(host, ipaddr.IPv6.parse(inner), allowLoopback);
  }

  // Numeric-looking hosts are IP attempts whatever the parser made of them
  // (it only normalizes when at most one trailing dot is present).
  const bare = host.replace(/\.+$/, '');
  if (bare === '') return fail('malformed', `host ${host} has an empty label`);
  if (endsInNumber(bare) || ipaddr.IPv4.isValid(bare)) {
    if (!ipaddr.IPv4.isValid(bare)) {
      return fail('malformed', `host ${host} looks like an IPv4 address but is not a valid one`);
    }
    const refused = checkIp(host, ipaddr.IPv4.parse(bare), allowLoopback);
    if (refused) return refused;
  }

  // One trailing dot is a legitimate fully-qualified spelling; any other empty label is not.
  const labels = host.replace(/\.$/, '').split('.');
  if (labels.some((label) => label === '')) return fail('malformed', `host ${host} has an empty label`);

  if (labels[labels.length - 1] === 'localhost') {
    if (allowLoopback && labels.length === 1) return undefined;
    return fail('localhost', `host ${host} is a localhost name, not a public host`);
  }
  if (labels.length < 2) {
    return fail('single_label', `host ${host} is a single-label name; use a fully qualified domain name`);
  }
  return undefined;
}

function checkIp(host: string, address: Address, allowLoopback: boolean): UrlCheck | undefined {
  const c = classify(address);
  if (isAllowed(c, allowLoopback)) return undefined;
  const embedded = c.embedded
    ? ` (embedding ${c.embedded.range === 'unicast' ? 'public' : c.embedded.range} IPv4 ${c.embedded.address})`
    : '';
  return fail('ip_not_public', `host ${host} is ${article(c.range)} ${c.range} address${embedded}, not a public one`);
}

function isAllowed(c: Classification, allowLoopback: boolean): boolean {
  if (c.zoned) return false; // a scoped address is never a public destination
  return c.range === 'unicast' || (allowLoopback && c.range === 'loopback');
}

/**
 * ipaddr.js's range, tightened for IPv6: only 2000::/3 is allocated for global
 * unicast, so ipaddr's "unicast" elsewhere (notably the deprecated
 * IPv4-compatible ::a.b.c.d, which the URL parser emits as ::7f00:1) is refused.
 */
function classify(address: Address): Classification {
  if (!(address instanceof ipaddr.IPv6)) return { range: address.range(), zoned: false };
  const v6 = address;
  const p = v6.parts;
  const zoned = v6.zoneId !== undefined && v6.zoneId !== '';
  let range: string = v6.range();
  if (range === 'unicast' && (p[0]! & 0xe000) !== 0x2000) {
    range = p.slice(0, 6).every((x) => x === 0) ? 'ipv4Compatible' : 'reserved';
  }
  const v4 = embeddedIPv4(v6, range);
  return v4 ? { range, zoned, embedded: { address: v4.toString(), range: v4.range() } } : { range, zoned };
}

/** The IPv4 address carried by a transition form, for a more useful refusal detail. */
function embeddedIPv4(v6: ipaddr.IPv6, range: string): ipaddr.IPv4 | undefined {
  const p = v6.parts;
  const quad = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  switch (range) {
    case 'ipv4Mapped':
      return v6.toIPv4Address();
    case 'rfc6145': // ::ffff:0:a.b.c.d
    case 'ipv4Compatible': // ::a.b.c.d
      return quad(p[6]!, p[7]!);
    case 'rfc6052': // NAT64 well-known prefix 64:ff9b::/96 (the /48 local-use prefix has no fixed position)
      return p[2] === 0 ? quad(p[6]!, p[7]!) : undefined;
    case '6to4': // 2002:AABB:CCDD::/48
      return quad(p[1]!, p[2]!);
    case 'teredo': // client address is the last 32 bits, inverted
      return quad(~p[6]! & 0xffff, ~p[7]! & 0xffff);
    default:
      return undefined;
  }
}

/** Loopback as the scheme rule understands it: localhost, 127.0.0.0/8 and ::1 (canonical parser output). */
function isLoopbackHost(host: string): boolean {
  if (host.startsWith('[')) {
    const inner = host.slice(1, -1);
    return ipaddr.IPv6.isValid(inner) && ipaddr.IPv6.parse(inner).range() === 'loopback';
  }
  const bare = host.replace(/\.$/, '');
  if (bare === 'localhost') return true;
  return ipaddr.IPv4.isValidFourPartDecimal(bare) && ipaddr.IPv4.parse(bare).range() === 'loopback';
}

/** WHATWG "ends in a number": the last label is decimal digits or 0x-hex, so the host is an IPv4 attempt. */
function endsInNumber(name: string): boolean {
  const last = name.split('.').pop() ?? '';
  return /^(?:\d+|0x[0-9a-f]*)$/i.test(last);
}

function article(word: string): string {
  return /^(?:[aeio]|un(?!i))/i.test(word) ? 'an' : 'a';
}

function tooLong(length: number): UrlCheck {
  return fail('too_long', `URL must be at most ${MAX_URL_LENGTH} characters (got ${length})`);
}

function fail(rule: UrlRule, detail: string): UrlCheck {
  return { ok: false, rule, detail };
}
