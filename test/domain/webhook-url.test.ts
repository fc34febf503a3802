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
const REFUSED: ReadonlyArray<readonly [string, UrlRule]> = [
  // --- not a URL / rejected by the URL parser itself
  ['', 'malformed'],
  ['not a url', 'malformed'],
  ['example.com/hook', 'malformed'], // no scheme
  ['//example.com/hook', 'malformed'],
  ['https://', 'malformed'],
  ['https://[::1/', 'malformed'],
  ['https://[gggg::1]/', 'malformed'],
  ['https://[fe80::1%25eth0]/', 'malformed'], // zone ids are not allowed in URL hosts
  ['https://[fe80::1%eth0]/', 'malformed'],
  ['https://4294967296/', 'malformed'], // > 2^32 - 1
  ['https://1.2.3.4.5/', 'malformed'], // ends in a number, five parts
  ['https://08.0.0.1/', 'malformed'], // invalid octal
  ['https://example.com:65536/', 'malformed'],
  // --- accepted by the parser, refused by our own checks
  ['https://example.com:0/', 'malformed'], // port 0 is not a destination
  ['https://a..example.com/', 'malformed'],
  ['https://.example.com/', 'malformed'],
  ['https://example.com../', 'malformed'],
  ['https://8.8.8.8../', 'malformed'], // the parser keeps "8.8.8.8.." as a domain
  [' https://example.com/', 'malformed'], // the parser would silently trim it
  ['https://exam\tple.com/', 'malformed'], // the parser would silently drop the tab
  ['https://example.com/hook\n', 'malformed'],
  // --- scheme
  ['http://example.com/hook', 'scheme'],
  ['HTTP://EXAMPLE.COM/', 'scheme'],
  ['http://127.0.0.1/', 'scheme'], // loopback over http needs allowLoopback
  ['ftp://example.com/', 'scheme'],
  ['wss://example.com/', 'scheme'],
  ['gopher://example.com/', 'scheme'],
  ['javascript:alert(1)', 'scheme'],
  ['file:///etc/passwd', 'scheme'],
  ['data:text/plain,hi', 'scheme'],
  // --- credentials
  ['https://user:pass@example.com/', 'credentials'],
  ['https://user@example.com/', 'credentials'],
  ['https://:secret@example.com/', 'credentials'],
  ['https://8.8.8.8&@127.0.0.1/', 'credentials'], // host is 127.0.0.1; userinfo "8.8.8.8&"
  // --- localhost
  ['https://localhost/', 'localhost'],
  ['https://LOCALHOST/', 'localhost'],
  ['https://localhost./', 'localhost'],
  ['https://LocalHost.:8443/hook', 'localhost'],
  ['https://api.localhost/', 'localhost'],
  ['https://a.b.localhost./', 'localhost'],
  ['https://ｌｏｃａｌｈｏｓｔ/', 'localhost'], // full-width, NFKC-mapped to localhost
  ['https://%6c%6f%63%61%6c%68%6f%73%74/', 'localhost'], // percent-decoded by the parser
  // --- single label
  ['https://intranet/', 'single_label'],
  ['https://INTRANET./', 'single_label'],
  ['https://metadata/computeMetadata/v1/', 'single_label'],
  ['https://deadbeef/', 'single_label'], // hex letters without 0x are a name, not a number
  ['https://例え/', 'single_label'], // xn--r8jz45g
  // --- IPv4 loopback, every spelling (all normalize to 127.0.0.1 unless noted)
  ['https://127.0.0.1/', 'ip_not_public'],
  ['https://127.0.0.1:8443/hook', 'ip_not_public'],
  ['https://127.0.0.1./', 'ip_not_public'],
  ['https://127.0.0.1../', 'ip_not_public'], // kept verbatim by the parser; caught by our numeric check
  ['https://127.255.255.254/', 'ip_not_public'],
  ['https://2130706433/', 'ip_not_public'], // decimal integer
  ['https://017700000001/', 'ip_not_public'], // octal integer
  ['https://0177.0.0.1/', 'ip_not_public'],
  ['https://0x7f.0.0.1/', 'ip_not_public'],
  ['https://0x7F.0x0.0x0.0x1/', 'ip_not_public'],
  ['https://0x7f000001/', 'ip_not_public'],
  ['https://0x7f.1/', 'ip_not_public'],
  ['https://127.1/', 'ip_not_public'],
  ['https://127.0.1/', 'ip_not_public'],
  ['https://１２７.０.０.１/', 'ip_not_public'], // full-width digits
  ['https://127。0。0。1/', 'ip_not_public'], // ideographic full stops
  ['https://127%2e0%2e0%2e1/', 'ip_not_public'],
  // --- IPv4 private, link-local, CGNAT, special
  ['https://10.1/', 'ip_not_public'], // 10.0.0.1
  ['https://10.0.0.1/', 'ip_not_public'],
  ['https://172.16.0.1/', 'ip_not_public'],
  ['https://172.31.255.255/', 'ip_not_public'],
  ['https://192.168.1.1/', 'ip_not_public'],
  ['https://3232235777/', 'ip_not_public'], // 192.168.1.1
  ['https://0300.0250.0.1/', 'ip_not_public'], // 192.168.0.1
  ['https://169.254.169.254/latest/meta-data/', 'ip_not_public'],
  ['https://0xa9fea9fe/', 'ip_not_public'], // 169.254.169.254
  ['https://100.64.0.1/', 'ip_not_public'],
  ['https://100.127.255.254/', 'ip_not_public'],
  ['https://0.0.0.0/', 'ip_not_public'],
  ['https://0/', 'ip_not_public'], // 0.0.0.0
  ['https://0x0/', 'ip_not_public'], // 0.0.0.0
  ['https://0.1.2.3/', 'ip_not_public'],
  ['https://255.255.255.255/', 'ip_not_public'],
  ['https://4294967295/', 'ip_not_public'], // 255.255.255.255
  ['https://224.0.0.1/', 'ip_not_public'],
  ['https://239.255.255.250/', 'ip_not_public'],
  ['https://240.0.0.1/', 'ip_not_public'],
  ['https://192.0.2.1/', 'ip_not_public'], // TEST-NET-1
  ['https://198.51.100.7/', 'ip_not_public'], // TEST-NET-2
  ['https://203.0.113.9/', 'ip_not_public'], // TEST-NET-3
  ['https://198.18.0.1/', 'ip_not_public'], // benchmarking
  ['https://192.0.0.9/', 'ip_not_public'],
  ['https://192.88.99.1/', 'ip_not_public'], // 6to4 relay anycast
  // --- IPv6
  ['https://[::1]/', 'ip_not_public'],
  ['https://[0:0:0:0:0:0:0:1]:8443/', 'ip_not_public'],
  ['https://[::]/', 'ip_not_public'],
  ['https://[::ffff:127.0.0.1]/', 'ip_not_public'], // -> [::ffff:7f00:1]
  ['https://[::ffff:7f00:1]/', 'ip_not_public'],
  ['https://[::FFFF:10.0.0.1]/', 'ip_not_public'],
  ['https://[::ffff:a9fe:a9fe]/', 'ip_not_public'],
  ['https://[::ffff:8.8.8.8]/', 'ip_not_public'], // mapped form refused even for a public IPv4
  ['https://[::127.0.0.1]/', 'ip_not_public'], // IPv4-compatible -> [::7f00:1], "unicast" for ipaddr.js
  ['https://[::ffff:0:7f00:1]/', 'ip_not_public'], // SIIT / rfc6145
  ['https://[64:ff9b::10.0.0.1]/', 'ip_not_public'], // NAT64 -> [64:ff9b::a00:1]
  ['https://[64:ff9b::7f00:1]/', 'ip_not_public'],
  ['https://[64:ff9b:1::a00:1]/', 'ip_not_public'], // NAT64 local-use /48
  ['https://[2002:c0a8:101::1]/', 'ip_not_public'], // 6to4 of 192.168.1.1
  ['https://[2002:7f00:1::]/', 'ip_not_public'], // 6to4 of 127.0.0.1
  ['https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/', 'ip_not_public'], // Teredo, client 10.0.0.1
  ['https://[fe80::1]/', 'ip_not_public'],
  ['https://[FE80::1]/', 'ip_not_public'],
  ['https://[fc00::1]/', 'ip_not_public'],
  ['https://[fd00:ec2::254]/', 'ip_not_public'], // AWS IMDS over IPv6
  ['https://[fec0::1]/', 'ip_not_public'], // deprecated site-local
  ['https://[ff02::1]/', 'ip_not_public'],
  ['https://[2001:db8::1]/', 'ip_not_public'], // documentation
  ['https://[2001:2::1]/', 'ip_not_public'], // benchmarking
  ['https://[100::1]/', 'ip_not_public'], // discard
  ['https://[5f00::1]/', 'ip_not_public'], // segment routing
  ['https://[1::1]/', 'ip_not_public'], // outside 2000::/3, "unicast" for ipaddr.js
  // --- length
  [`https://example.com/${'a'.repeat(2048)}`, 'too_long'],
  [`https://example.com/${'é'.repeat(1000)}`, 'too_long'], // 1020 chars typed, > 2048 once percent-encoded
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

  it.each(REFUSED)('refuses %j (%s)', (raw, rule) => {
    const result = refusal(raw);
    expect(result.rule).toBe(rule);
    expect(result.detail).not.toBe('');
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
      expect(checkWebhookUrl(junk as string)).toMatchObject({ ok: false, rule: 'malformed' });
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

  it.each<readonly [string, UrlRule]>([
    ['http://example.com', 'scheme'],
    ['http://10.0.0.1/', 'scheme'],
    ['ftp://localhost/', 'scheme'],
    ['http://[::ffff:127.0.0.1]/', 'scheme'], // only localhost, 127/8 and ::1 count as loopback
    ['https://10.0.0.1', 'ip_not_public'],
    ['https://0.0.0.0/', 'ip_not_public'],
    ['https://[::ffff:127.0.0.1]/', 'ip_not_public'],
    ['https://[fe80::1]/', 'ip_not_public'],
    ['https://api.localhost/', 'localhost'],
    ['https://intranet/', 'single_label'],
    ['http://user:pw@localhost/', 'credentials'],
    ['http://127.0.0.1../', 'scheme'], // not a canonical loopback host, so no http exception
    ['https://127.0.0.1../', 'malformed'], // loopback is allowed, the empty label is not
    [`http://localhost/${'a'.repeat(2048)}`, 'too_long'],
  ])('still refuses %j (%s)', (raw, rule) => {
    expect(refusal(raw, true).rule).toBe(rule);
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
