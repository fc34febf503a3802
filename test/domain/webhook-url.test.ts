import { isIP } from 'node:net';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { checkWebhookUrl, isPublicAddress, type UrlRule } from '../../lambdas/domain/webhook-url';

/** Asserts a refusal and returns its detail, so cases can check the sentence too. */
function refusal(raw: string, allowLoopback = false): { rule: UrlRule; detail: string } {
  const result = checkWebhookUrl(raw, { allowLoopback });
  if (result.ok) throw new Error(`expected ${JSON.stringify(raw)} to be refused, got ${result.url.href}`);
  return { rule: result.rule, detail: result.detail };
}

// Each spelling was run through Node 20's WHATWG URL parser; comments give what it made of the host.
const REFUSED: ReadonlyArray<readonly [string, UrlRule, string]> = [
  // --- not a URL / rejected by the URL parser itself
  ['', 'malformed', 'URL could not be parsed'],
  ['not a url', 'malformed', 'URL must not contain whitespace or control characters'],
  ['example.com/hook', 'malformed', 'URL could not be parsed'], // no scheme
  ['//example.com/hook', 'malformed', 'URL could not be parsed'],
  ['https://', 'malformed', 'URL could not be parsed'],
  ['https://[::1/', 'malformed', 'URL could not be parsed'],
  ['https://[gggg::1]/', 'malformed', 'URL could not be parsed'],
  ['https://[fe80::1%25eth0]/', 'malformed', 'URL could not be parsed'], // zone ids are not allowed in URL hosts
  ['https://[fe80::1%eth0]/', 'malformed', 'URL could not be parsed'],
  ['https://4294967296/', 'malformed', 'URL could not be parsed'], // > 2^32 - 1
  ['https://1.2.3.4.5/', 'malformed', 'URL could not be parsed'], // ends in a number, five parts
  ['https://08.0.0.1/', 'malformed', 'URL could not be parsed'], // invalid octal
  ['https://example.com:65536/', 'malformed', 'URL could not be parsed'],
  // --- accepted by the parser, refused by our own checks
  ['https://example.com:0/', 'malformed', 'URL port 0 is not a valid destination port'], // port 0 is not a destination
  ['https://a..example.com/', 'malformed', 'host a..example.com has an empty label'],
  ['https://.example.com/', 'malformed', 'host .example.com has an empty label'],
  ['https://example.com../', 'malformed', 'host example.com.. has an empty label'],
  ['https://8.8.8.8../', 'malformed', 'host 8.8.8.8.. has an empty label'], // the parser keeps "8.8.8.8.." as a domain
  [' https://example.com/', 'malformed', 'URL must not contain whitespace or control characters'], // the parser would silently trim it
  ['https://exam\tple.com/', 'malformed', 'URL must not contain whitespace or control characters'], // the parser would silently drop the tab
  ['https://example.com/hook\n', 'malformed', 'URL must not contain whitespace or control characters'],
  ['https://../', 'malformed', 'host .. has an empty label'], // dots only
  // More than one trailing dot keeps a numeric-looking host a domain for the parser: ours is a number when its last label is
  ['https://1.2.3.4.5../', 'malformed', 'host 1.2.3.4.5.. looks like an IPv4 address but is not a valid one'],
  ['https://999.1.1.1../', 'malformed', 'host 999.1.1.1.. looks like an IPv4 address but is not a valid one'],
  ['https://example.12../', 'malformed', 'host example.12.. looks like an IPv4 address but is not a valid one'],
  ['https://example.0x12../', 'malformed', 'host example.0x12.. looks like an IPv4 address but is not a valid one'],
  ['https://example.0x../', 'malformed', 'host example.0x.. looks like an IPv4 address but is not a valid one'],
  ['https://example.a1../', 'malformed', 'host example.a1.. has an empty label'], // a1 and 1a are names, not numbers
  ['https://example.1a../', 'malformed', 'host example.1a.. has an empty label'],
  // --- scheme
  ['http://example.com/hook', 'scheme', 'URL must use https (got http:)'],
  ['HTTP://EXAMPLE.COM/', 'scheme', 'URL must use https (got http:)'],
  ['http://127.0.0.1/', 'scheme', 'URL must use https (got http:)'], // loopback over http needs allowLoopback
  ['ftp://example.com/', 'scheme', 'URL must use https (got ftp:)'],
  ['wss://example.com/', 'scheme', 'URL must use https (got wss:)'],
  ['gopher://example.com/', 'scheme', 'URL must use https (got gopher:)'],
  ['javascript:alert(1)', 'scheme', 'URL must use https (got javascript:)'],
  ['file:///etc/passwd', 'scheme', 'URL must use https (got file:)'],
  ['data:text/plain,hi', 'scheme', 'URL must use https (got data:)'],
  // --- credentials
  ['https://user:pass@example.com/', 'credentials', 'URL must not contain credentials'],
  ['https://user@example.com/', 'credentials', 'URL must not contain credentials'],
  ['https://:secret@example.com/', 'credentials', 'URL must not contain credentials'],
  ['https://8.8.8.8&@127.0.0.1/', 'credentials', 'URL must not contain credentials'], // host is 127.0.0.1; userinfo "8.8.8.8&"
  // --- localhost
  ['https://localhost/', 'localhost', 'host localhost is a localhost name, not a public host'],
  ['https://LOCALHOST/', 'localhost', 'host localhost is a localhost name, not a public host'],
  ['https://localhost./', 'localhost', 'host localhost. is a localhost name, not a public host'],
  ['https://LocalHost.:8443/hook', 'localhost', 'host localhost. is a localhost name, not a public host'],
  ['https://api.localhost/', 'localhost', 'host api.localhost is a localhost name, not a public host'],
  ['https://a.b.localhost./', 'localhost', 'host a.b.localhost. is a localhost name, not a public host'],
  ['https://ｌｏｃａｌｈｏｓｔ/', 'localhost', 'host localhost is a localhost name, not a public host'], // full-width, NFKC-mapped to localhost
  ['https://%6c%6f%63%61%6c%68%6f%73%74/', 'localhost', 'host localhost is a localhost name, not a public host'], // percent-decoded by the parser
  // --- single label
  ['https://intranet/', 'single_label', 'host intranet is a single-label name; use a fully qualified domain name'],
  ['https://INTRANET./', 'single_label', 'host intranet. is a single-label name; use a fully qualified domain name'],
  ['https://metadata/computeMetadata/v1/', 'single_label', 'host metadata is a single-label name; use a fully qualified domain name'],
  ['https://deadbeef/', 'single_label', 'host deadbeef is a single-label name; use a fully qualified domain name'], // hex letters without 0x are a name, not a number
  ['https://例え/', 'single_label', 'host xn--r8jz45g is a single-label name; use a fully qualified domain name'], // xn--r8jz45g
  // --- IPv4 loopback, every spelling (all normalize to 127.0.0.1 unless noted)
  ['https://127.0.0.1/', 'ip_not_public', 'host 127.0.0.1 is a loopback address, not a public one'],
  ['https://127.0.0.1:8443/hook', 'ip_not_public', 'host 127.0.0.1 is a loopback address, not a public one'],
  ['https://127.0.0.1./', 'ip_not_public', 'host 127.0.0.1 is a loopback address, not a public one'],
  ['https://127.0.0.1../', 'ip_not_public', 'host 127.0.0.1.. is a loopback address, not a public one'], // kept verbatim by the parser; caught by our numeric check
  ['https://127.255.255.254/', 'ip_not_public', 'host 127.255.255.254 is a loopback address, not a public one'],
  ['https://2130706433/', 'ip_not_public', 'host 127.0.0.1 is a loopback address, not a public one'], // decimal integer
  ['https://017700000001/', 'ip_not_public', 'host 127.0.0.1 is a loopback address, not a public one'], // octal integer
  ['https://0177.0.0.1/', 'ip_not_public', 'host 127.0.0.1 is a loopback address, not a public one'],
  ['https://0x7f.0.0.1/', 'ip_not_public', 'host 127.0.0.1 is a loopback address, not a public one'],
  ['https://0x7F.0x0.0x0.0x1/', 'ip_not_public', 'host 127.0.0.1 is a loopback address, not a public one'],
  ['https://0x7f000001/', 'ip_not_public', 'host 127.0.0.1 is a loopback address, not a public one'],
  ['https://0x7f.1/', 'ip_not_public', 'host 127.0.0.1 is a loopback address, not a public one'],
  ['https://127.1/', 'ip_not_public', 'host 127.0.0.1 is a loopback address, not a public one'],
  ['https://127.0.1/', 'ip_not_public', 'host 127.0.0.1 is a loopback address, not a public one'],
  ['https://１２７.０.０.１/', 'ip_not_public', 'host 127.0.0.1 is a loopback address, not a public one'], // full-width digits
  ['https://127。0。0。1/', 'ip_not_public', 'host 127.0.0.1 is a loopback address, not a public one'], // ideographic full stops
  ['https://127%2e0%2e0%2e1/', 'ip_not_public', 'host 127.0.0.1 is a loopback address, not a public one'],
  // --- IPv4 private, link-local, CGNAT, special
  ['https://10.1/', 'ip_not_public', 'host 10.0.0.1 is a private address, not a public one'], // 10.0.0.1
  ['https://10.0.0.1/', 'ip_not_public', 'host 10.0.0.1 is a private address, not a public one'],
  ['https://172.16.0.1/', 'ip_not_public', 'host 172.16.0.1 is a private address, not a public one'],
  ['https://172.31.255.255/', 'ip_not_public', 'host 172.31.255.255 is a private address, not a public one'],
  ['https://192.168.1.1/', 'ip_not_public', 'host 192.168.1.1 is a private address, not a public one'],
  ['https://3232235777/', 'ip_not_public', 'host 192.168.1.1 is a private address, not a public one'], // 192.168.1.1
  ['https://0300.0250.0.1/', 'ip_not_public', 'host 192.168.0.1 is a private address, not a public one'], // 192.168.0.1
  ['https://169.254.169.254/latest/meta-data/', 'ip_not_public', 'host 169.254.169.254 is a linkLocal address, not a public one'],
  ['https://0xa9fea9fe/', 'ip_not_public', 'host 169.254.169.254 is a linkLocal address, not a public one'], // 169.254.169.254
  ['https://100.64.0.1/', 'ip_not_public', 'host 100.64.0.1 is a carrierGradeNat address, not a public one'],
  ['https://100.127.255.254/', 'ip_not_public', 'host 100.127.255.254 is a carrierGradeNat address, not a public one'],
  ['https://0.0.0.0/', 'ip_not_public', 'host 0.0.0.0 is an unspecified address, not a public one'],
  ['https://0/', 'ip_not_public', 'host 0.0.0.0 is an unspecified address, not a public one'], // 0.0.0.0
  ['https://0x0/', 'ip_not_public', 'host 0.0.0.0 is an unspecified address, not a public one'], // 0.0.0.0
  ['https://0.1.2.3/', 'ip_not_public', 'host 0.1.2.3 is an unspecified address, not a public one'],
  ['https://255.255.255.255/', 'ip_not_public', 'host 255.255.255.255 is a broadcast address, not a public one'],
  ['https://4294967295/', 'ip_not_public', 'host 255.255.255.255 is a broadcast address, not a public one'], // 255.255.255.255
  ['https://224.0.0.1/', 'ip_not_public', 'host 224.0.0.1 is a multicast address, not a public one'],
  ['https://239.255.255.250/', 'ip_not_public', 'host 239.255.255.250 is a multicast address, not a public one'],
  ['https://240.0.0.1/', 'ip_not_public', 'host 240.0.0.1 is a reserved address, not a public one'],
  ['https://192.0.2.1/', 'ip_not_public', 'host 192.0.2.1 is a reserved address, not a public one'], // TEST-NET-1
  ['https://198.51.100.7/', 'ip_not_public', 'host 198.51.100.7 is a reserved address, not a public one'], // TEST-NET-2
  ['https://203.0.113.9/', 'ip_not_public', 'host 203.0.113.9 is a reserved address, not a public one'], // TEST-NET-3
  ['https://198.18.0.1/', 'ip_not_public', 'host 198.18.0.1 is a reserved address, not a public one'], // benchmarking
  ['https://192.0.0.9/', 'ip_not_public', 'host 192.0.0.9 is a reserved address, not a public one'],
  ['https://192.88.99.1/', 'ip_not_public', 'host 192.88.99.1 is a reserved address, not a public one'], // 6to4 relay anycast
  // --- IPv6
  ['https://[::1]/', 'ip_not_public', 'host [::1] is a loopback address, not a public one'],
  ['https://[0:0:0:0:0:0:0:1]:8443/', 'ip_not_public', 'host [::1] is a loopback address, not a public one'],
  ['https://[::]/', 'ip_not_public', 'host [::] is an unspecified address, not a public one'],
  [
    'https://[::ffff:127.0.0.1]/',
    'ip_not_public',
    'host [::ffff:7f00:1] is an ipv4Mapped address (embedding loopback IPv4 127.0.0.1), not a public one',
  ], // -> [::ffff:7f00:1]
  [
    'https://[::ffff:7f00:1]/',
    'ip_not_public',
    'host [::ffff:7f00:1] is an ipv4Mapped address (embedding loopback IPv4 127.0.0.1), not a public one',
  ],
  [
    'https://[::FFFF:10.0.0.1]/',
    'ip_not_public',
    'host [::ffff:a00:1] is an ipv4Mapped address (embedding private IPv4 10.0.0.1), not a public one',
  ],
  [
    'https://[::ffff:a9fe:a9fe]/',
    'ip_not_public',
    'host [::ffff:a9fe:a9fe] is an ipv4Mapped address (embedding linkLocal IPv4 169.254.169.254), not a public one',
  ],
  [
    'https://[::ffff:8.8.8.8]/',
    'ip_not_public',
    'host [::ffff:808:808] is an ipv4Mapped address (embedding public IPv4 8.8.8.8), not a public one',
  ], // mapped form refused even for a public IPv4
  [
    'https://[::127.0.0.1]/',
    'ip_not_public',
    'host [::7f00:1] is an ipv4Compatible address (embedding loopback IPv4 127.0.0.1), not a public one',
  ], // IPv4-compatible -> [::7f00:1], "unicast" for ipaddr.js
  [
    'https://[::ffff:0:7f00:1]/',
    'ip_not_public',
    'host [::ffff:0:7f00:1] is a rfc6145 address (embedding loopback IPv4 127.0.0.1), not a public one',
  ], // SIIT / rfc6145
  [
    'https://[64:ff9b::10.0.0.1]/',
    'ip_not_public',
    'host [64:ff9b::a00:1] is a rfc6052 address (embedding private IPv4 10.0.0.1), not a public one',
  ], // NAT64 -> [64:ff9b::a00:1]
  [
    'https://[64:ff9b::7f00:1]/',
    'ip_not_public',
    'host [64:ff9b::7f00:1] is a rfc6052 address (embedding loopback IPv4 127.0.0.1), not a public one',
  ],
  ['https://[64:ff9b:1::a00:1]/', 'ip_not_public', 'host [64:ff9b:1::a00:1] is a rfc6052 address, not a public one'], // NAT64 local-use /48
  [
    'https://[2002:c0a8:101::1]/',
    'ip_not_public',
    'host [2002:c0a8:101::1] is a 6to4 address (embedding private IPv4 192.168.1.1), not a public one',
  ], // 6to4 of 192.168.1.1
  [
    'https://[2002:7f00:1::]/',
    'ip_not_public',
    'host [2002:7f00:1::] is a 6to4 address (embedding loopback IPv4 127.0.0.1), not a public one',
  ], // 6to4 of 127.0.0.1
  [
    'https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/',
    'ip_not_public',
    'host [2001:0:4136:e378:8000:63bf:f5ff:fffe] is a teredo address (embedding private IPv4 10.0.0.1), not a public one',
  ], // Teredo, client 10.0.0.1
  ['https://[fe80::1]/', 'ip_not_public', 'host [fe80::1] is a linkLocal address, not a public one'],
  ['https://[FE80::1]/', 'ip_not_public', 'host [fe80::1] is a linkLocal address, not a public one'],
  ['https://[fc00::1]/', 'ip_not_public', 'host [fc00::1] is a uniqueLocal address, not a public one'],
  ['https://[fd00:ec2::254]/', 'ip_not_public', 'host [fd00:ec2::254] is a uniqueLocal address, not a public one'], // AWS IMDS over IPv6
  ['https://[fec0::1]/', 'ip_not_public', 'host [fec0::1] is a deprecatedSiteLocal address, not a public one'], // deprecated site-local
  ['https://[ff02::1]/', 'ip_not_public', 'host [ff02::1] is a multicast address, not a public one'],
  ['https://[2001:db8::1]/', 'ip_not_public', 'host [2001:db8::1] is a reserved address, not a public one'], // documentation
  ['https://[2001:2::1]/', 'ip_not_public', 'host [2001:2::1] is a benchmarking address, not a public one'], // benchmarking
  ['https://[100::1]/', 'ip_not_public', 'host [100::1] is a discard address, not a public one'], // discard
  ['https://[5f00::1]/', 'ip_not_public', 'host [5f00::1] is a segmentRouting address, not a public one'], // segment routing
  ['https://[1::1]/', 'ip_not_public', 'host [1::1] is a reserved address, not a public one'], // outside 2000::/3, "unicast" for ipaddr.js
  // --- the article before each range name: "an" before a vowel sound, "a" before "uni…"
  ['https://192.52.193.1/', 'ip_not_public', 'host 192.52.193.1 is an amt address, not a public one'],
  ['https://192.31.196.1/', 'ip_not_public', 'host 192.31.196.1 is an as112 address, not a public one'],
  ['https://[2001:20::1]/', 'ip_not_public', 'host [2001:20::1] is an orchid2 address, not a public one'],
  ['https://[2001:3::1]/', 'ip_not_public', 'host [2001:3::1] is an amt address, not a public one'],
  // --- the embedded IPv4 address, byte by byte
  [
    'https://[::ffff:0:a00:1]/',
    'ip_not_public',
    'host [::ffff:0:a00:1] is a rfc6145 address (embedding private IPv4 10.0.0.1), not a public one',
  ],
  [
    'https://[2002:c0a8:101::]/',
    'ip_not_public',
    'host [2002:c0a8:101::] is a 6to4 address (embedding private IPv4 192.168.1.1), not a public one',
  ],
  // Teredo of 192.168.1.2 (the client address is stored inverted)
  [
    'https://[2001:0:4136:e378:8000:63bf:3f57:fefd]/',
    'ip_not_public',
    'host [2001:0:4136:e378:8000:63bf:3f57:fefd] is a teredo address (embedding private IPv4 192.168.1.2), not a public one',
  ],
  // --- length
  [`https://example.com/${'a'.repeat(2048)}`, 'too_long', 'URL must be at most 2048 characters (got 2068)'],
  [`https://example.com/${'é'.repeat(1000)}`, 'too_long', 'URL must be at most 2048 characters (got 6020)'], // 1020 chars typed, > 2048 once percent-encoded
];

const ACCEPTED: ReadonlyArray<readonly [string, string]> = [
  ['https://example.com/hook', 'example.com'],
  ['https://hooks.example.com:8443/x?y=1', 'hooks.example.com'],
  ['https://example.com:443/', 'example.com'],
  ['HTTPS://EXAMPLE.COM/Hook', 'example.com'],
  ['https://example.com./', 'example.com.'],
  ['https://93.184.216.34/', '93.184.216.34'],
  ['https://8.8.8.8:8443/hook', '8.8.8.8'],
  ['https://8.8.8.8./', '8.8.8.8'],
  ['https://[2606:4700:4700::1111]/', '[2606:4700:4700::1111]'],
  ['https://[2001:4860:4860::8888]:8443/', '[2001:4860:4860::8888]'],
  ['https://例え.jp/hook', 'xn--r8jz45g.jp'],
  ['https://bücher.example/', 'xn--bcher-kva.example'],
  ['https://ab.cd/', 'ab.cd'], // hex-looking labels, but the last label is not a number
  ['https://1e1.com/', '1e1.com'],
  ['https://0x7f.example.com/', '0x7f.example.com'],
  ['https://localhost.example.com/', 'localhost.example.com'],
  ['https://example.com/#@127.0.0.1', 'example.com'],
  // Static checks only: names that resolve to private addresses are caught at delivery via isPublicAddress.
  ['https://127.0.0.1.nip.io/', '127.0.0.1.nip.io'],
  [`https://example.com/${'a'.repeat(2048 - 'https://example.com/'.length)}`, 'example.com'],
];

/**
 * URL-shaped strings: a scheme, a host (a domain, an IP literal or anything) and any rest. Built from
 * small arbitraries on purpose: fast-check's `webUrl` takes seconds to build its first arbitrary,
 * which every mutant run of `npm run mutate` would pay again.
 */
const urlLike = fc
  .tuple(
    fc.constantFrom('https://', 'http://', 'HTTPS://', 'ftp://', ''),
    fc.oneof(
      fc.domain(),
      fc.ipV4(),
      fc.ipV6().map((a) => `[${a}]`),
      fc.string(),
    ),
    fc.constantFrom('', ':443', ':0', ':8443', ':65536'),
    fc.string(),
  )
  .map(([scheme, host, port, rest]) => `${scheme}${host}${port}/${rest}`);

describe('checkWebhookUrl', () => {
  it('accepts only https URLs of at most 2048 characters, with no credentials, port 0 or localhost, on a dotted host', () => {
    fc.assert(
      fc.property(urlLike, (raw) => {
        const result = checkWebhookUrl(raw);
        if (!result.ok) return;
        const { url } = result;
        expect(url.protocol).toBe('https:');
        expect(raw.length).toBeLessThanOrEqual(2048);
        expect(url.href.length).toBeLessThanOrEqual(2048);
        expect(url.username + url.password).toBe('');
        expect(url.port).not.toBe('0');
        expect(url.hostname.replace(/\.$/, '').split('.').pop()).not.toBe('localhost');
        expect(url.hostname.replace(/\.$/, '')).toMatch(/\.|^\[/);
      }),
    );
  });

  it.each(REFUSED)('refuses %j (%s: %s)', (raw, rule, detail) => {
    expect(checkWebhookUrl(raw)).toEqual({ ok: false, rule, detail });
  });

  it.each(ACCEPTED)('accepts %j (host %s)', (raw, hostname) => {
    const result = checkWebhookUrl(raw);
    expect(result).toMatchObject({ ok: true });
    if (result.ok) expect(result.url.hostname).toBe(hostname);
  });

  it('says which rule failed', () => {
    expect(refusal('http://example.com/').detail).toBe('URL must use https (got http:)');
    expect(refusal('https://u:p@example.com/').detail).toBe('URL must not contain credentials');
    expect(refusal('https://2130706433/').detail).toBe('host 127.0.0.1 is a loopback address, not a public one');
    expect(refusal('https://10.1/').detail).toBe('host 10.0.0.1 is a private address, not a public one');
    expect(refusal('https://[64:ff9b::10.0.0.1]/').detail).toBe(
      'host [64:ff9b::a00:1] is a rfc6052 address (embedding private IPv4 10.0.0.1), not a public one',
    );
    expect(refusal('https://[::127.0.0.1]/').detail).toContain('embedding loopback IPv4 127.0.0.1');
    expect(refusal('https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/').detail).toContain('teredo address (embedding private IPv4 10.0.0.1)');
    expect(refusal('https://localhost/').detail).toContain('localhost');
    expect(refusal('https://intranet/').detail).toContain('single-label');
    expect(refusal(`https://example.com/${'a'.repeat(3000)}`).detail).toContain('2048');
  });

  it('measures the length on what was typed and on the normalized URL, 2048 characters at most', () => {
    // Dot segments shrink to nothing in the href: only the raw length refuses this.
    const dots = `https://example.com/${'./'.repeat(1100)}`;
    expect(new URL(dots).href).toBe('https://example.com/');
    expect(checkWebhookUrl(dots)).toEqual({ ok: false, rule: 'too_long', detail: 'URL must be at most 2048 characters (got 2220)' });
    // Punycode grows the host past the limit: only the href's length refuses this.
    const idn = `https://例え.jp/${'a'.repeat(2030)}`;
    expect(idn.length).toBeLessThanOrEqual(2048);
    expect(checkWebhookUrl(idn)).toEqual({ ok: false, rule: 'too_long', detail: 'URL must be at most 2048 characters (got 2053)' });
    // Exactly 2048 is fine, one more is not.
    const at = `https://example.com/${'a'.repeat(2048 - 'https://example.com/'.length)}`;
    expect(checkWebhookUrl(at).ok).toBe(true);
    expect(checkWebhookUrl(`${at}a`)).toEqual({ ok: false, rule: 'too_long', detail: 'URL must be at most 2048 characters (got 2049)' });
  });

  it('never throws, whatever the input', () => {
    const junks: unknown[] = [undefined, null, 42, {}, []];
    for (const junk of junks) {
      expect(checkWebhookUrl(junk as string)).toEqual({ ok: false, rule: 'malformed', detail: 'URL must be a string' });
    }
    fc.assert(
      fc.property(fc.oneof(fc.string(), urlLike), (raw) => {
        const result = checkWebhookUrl(raw);
        return result.ok ? result.url instanceof URL : result.detail.length > 0;
      }),
    );
  });
});

describe('checkWebhookUrl with allowLoopback', () => {
  it.each([
    ['http://localhost:3000/hook', 'localhost'],
    ['https://localhost/', 'localhost'],
    ['http://LOCALHOST./', 'localhost.'],
    ['http://127.0.0.1:8080/', '127.0.0.1'],
    ['https://127.0.0.1/', '127.0.0.1'],
    ['http://127.1.2.3/', '127.1.2.3'],
    ['http://2130706433/', '127.0.0.1'],
    ['http://[::1]:8080/', '[::1]'],
    ['https://[::1]/', '[::1]'],
  ])('allows loopback %j', (raw, hostname) => {
    const result = checkWebhookUrl(raw, { allowLoopback: true });
    expect(result).toMatchObject({ ok: true });
    if (result.ok) expect(result.url.hostname).toBe(hostname);
  });

  it('still accepts public https URLs', () => {
    expect(checkWebhookUrl('https://example.com/hook', { allowLoopback: true }).ok).toBe(true);
  });

  it.each<readonly [string, UrlRule, string]>([
    ['http://example.com', 'scheme', 'URL must use https (got http:; http is allowed only for loopback hosts)'],
    ['http://10.0.0.1/', 'scheme', 'URL must use https (got http:; http is allowed only for loopback hosts)'],
    ['ftp://localhost/', 'scheme', 'URL must use https (got ftp:; http is allowed only for loopback hosts)'],
    ['http://[::ffff:127.0.0.1]/', 'scheme', 'URL must use https (got http:; http is allowed only for loopback hosts)'], // only localhost, 127/8 and ::1 count as loopback
    ['http://[::2]/', 'scheme', 'URL must use https (got http:; http is allowed only for loopback hosts)'],
    ['http://localhost../', 'scheme', 'URL must use https (got http:; http is allowed only for loopback hosts)'], // not the canonical loopback name
    ['https://10.0.0.1', 'ip_not_public', 'host 10.0.0.1 is a private address, not a public one'],
    ['https://0.0.0.0/', 'ip_not_public', 'host 0.0.0.0 is an unspecified address, not a public one'],
    [
      'https://[::ffff:127.0.0.1]/',
      'ip_not_public',
      'host [::ffff:7f00:1] is an ipv4Mapped address (embedding loopback IPv4 127.0.0.1), not a public one',
    ],
    ['https://[fe80::1]/', 'ip_not_public', 'host [fe80::1] is a linkLocal address, not a public one'],
    ['https://api.localhost/', 'localhost', 'host api.localhost is a localhost name, not a public host'],
    ['https://intranet/', 'single_label', 'host intranet is a single-label name; use a fully qualified domain name'],
    ['http://user:pw@localhost/', 'credentials', 'URL must not contain credentials'],
    ['http://127.0.0.1../', 'scheme', 'URL must use https (got http:; http is allowed only for loopback hosts)'], // not a canonical loopback host, so no http exception
    ['https://127.0.0.1../', 'malformed', 'host 127.0.0.1.. has an empty label'], // loopback is allowed, the empty label is not
    [`http://localhost/${'a'.repeat(2048)}`, 'too_long', 'URL must be at most 2048 characters (got 2065)'],
  ])('still refuses %j (%s: %s)', (raw, rule, detail) => {
    expect(checkWebhookUrl(raw, { allowLoopback: true })).toEqual({ ok: false, rule, detail });
  });

  it('names the loopback exception in the scheme detail', () => {
    expect(refusal('http://example.com/', true).detail).toContain('http is allowed only for loopback hosts');
  });
});

describe('isPublicAddress', () => {
  it.each([
    ['8.8.8.8', true],
    ['93.184.216.34', true],
    ['1.1.1.1', true],
    ['2606:4700::1111', true],
    ['2001:4860:4860::8888', true],
    ['[2606:4700::1111]', true],
    ['[2606:4700::1111', false], // brackets count only in pairs
    ['2606:4700::1111]', false],
    ['x2606:4700::1111]', false],
    ['10.0.0.1', false],
    ['127.0.0.1', false],
    ['127.1', false],
    ['2130706433', false],
    ['0x7f.0.0.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['172.16.5.4', false],
    ['192.168.0.1', false],
    ['0.0.0.0', false],
    ['255.255.255.255', false],
    ['224.0.0.251', false],
    ['192.0.2.1', false],
    ['::1', false],
    ['::', false],
    ['::ffff:10.0.0.1', false],
    ['::ffff:8.8.8.8', false],
    ['::7f00:1', false],
    ['64:ff9b::a00:1', false],
    ['2002:c0a8:0101::1', false],
    ['2001:0:4136:e378:8000:63bf:f5ff:fffe', false],
    ['fe80::1', false],
    ['fe80::1%eth0', false],
    ['2606:4700::1111%eth0', false], // a scoped address is never a public destination
    ['fd00::1', false],
    ['ff02::1', false],
    ['2001:db8::1', false],
    ['1::1', false],
    ['example.com', false],
    ['', false],
    ['08.0.0.1', false],
    ['127.0.0.1.', false],
    // Non-canonical IPv4 spellings: ambiguous between parsers (octal or decimal?), never trusted.
    ['8.8.8.010', false], // ipaddr.js reads 8.8.8.8, inet_pton refuses it
    ['010.8.8.8', false],
    ['8.8.8.08', false],
    ['08.8.8.8', false],
    ['0x8.8.8.8', false],
    ['0x08080808', false],
    ['8.8.2056', false], // short form of 8.8.8.8
    ['8.526344', false],
    ['134744072', false], // 8.8.8.8 as one number
    ['0134.0.0.1', false],
    ['8.8.8.8 ', false],
    ['::ffff:8.8.8.010', false], // ipaddr.js reads the tail as decimal here
    ['64:ff9b::8.8.8.010', false],
    ['2606:4700::8.8.8.08', false],
    ['2606:4700::8.8.8.8', true], // a canonical embedded tail is fine (a public 2000::/3 address)
    ['2606:4700:0000:0000:0000:0000:0000:1111', true], // IPv6 zero padding is not ambiguous
  ])('isPublicAddress(%j) === %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });

  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['::1', true],
    ['8.8.8.8', true],
    ['10.0.0.1', false],
    ['0.0.0.0', false],
    ['::ffff:127.0.0.1', false],
    ['fe80::1', false],
  ])('with allowLoopback, isPublicAddress(%j) === %s', (address, expected) => {
    expect(isPublicAddress(address, { allowLoopback: true })).toBe(expected);
  });

  it('refuses anything that is not an IP literal, a non-string included', () => {
    expect(isPublicAddress(undefined as unknown as string)).toBe(false);
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string().map((s) => `[${s}]`),
        ),
        (s) => {
          const bare = s.startsWith('[') && s.endsWith(']') ? s.slice(1, -1) : s;
          if (isIP(bare) === 0) expect(isPublicAddress(s)).toBe(false);
        },
      ),
    );
  });

  it('judges a canonical IPv4 address by its range alone, bracketed or not: public exactly when unicast', () => {
    fc.assert(
      fc.property(fc.ipV4(), (address) => {
        const unicast = ipaddr.IPv4.parse(address).range() === 'unicast';
        expect(isPublicAddress(address)).toBe(unicast);
        expect(isPublicAddress(`[${address}]`)).toBe(unicast);
      }),
    );
  });
});
