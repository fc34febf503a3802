/** The redacted form of a capability URL (docs/behaviour.md#url-redaction). */
import { describe, expect, it } from 'vitest';
import { permissionsOf } from '../../lambdas/contract/permissions';
import { redactUrl, urlAsSeenWith } from '../../lambdas/domain/url-redaction';

describe('redactUrl', () => {
  it.each([
    ['https://hooks.example.com/in/3f9a?token=abc', 'https://hooks.example.com/…'],
    ['https://hooks.example.com/in/3f9a#frag', 'https://hooks.example.com/…'],
    ['https://hooks.example.com?token=abc', 'https://hooks.example.com/…'],
    // Uniform: a URL with nothing after the host still reads `/…`.
    ['https://hooks.example.com', 'https://hooks.example.com/…'],
    ['https://hooks.example.com/', 'https://hooks.example.com/…'],
    ['https://hooks.example.com:443/in', 'https://hooks.example.com/…'],
    ['https://hooks.example.com:8443/in', 'https://hooks.example.com:8443/…'],
    ['http://127.0.0.1:3000/hook?token=abc', 'http://127.0.0.1:3000/…'],
    ['https://[2001:db8::1]:8443/in?token=abc', 'https://[2001:db8::1]:8443/…'],
    ['https://user:pass@hooks.example.com/in', 'https://hooks.example.com/…'],
    ['https://bücher.example/in', 'https://xn--bcher-kva.example/…'],
    ['HTTPS://HOOKS.Example.COM/In/Secret', 'https://hooks.example.com/…'],
  ])('%s → %s', (url, redacted) => {
    expect(redactUrl(url)).toBe(redacted);
  });

  it('shows nothing of a value that is not a URL with a host', () => {
    for (const value of ['', 'not a url', '/in/secret?token=abc', 'mailto:someone@example.com?token=abc'])
      expect(redactUrl(value)).toBe('…');
  });
});

describe('urlAsSeenWith', () => {
  const url = 'https://hooks.example.com/in/3f9a?token=abc';
  it('is the full URL for the write and admin scopes (webhook:write), redacted for read or single read permissions', () => {
    expect(urlAsSeenWith(url, permissionsOf(['write']))).toBe(url);
    expect(urlAsSeenWith(url, permissionsOf(['admin']))).toBe(url);
    expect(urlAsSeenWith(url, permissionsOf(['webhook:read', 'webhook:write']))).toBe(url);
    expect(urlAsSeenWith(url, permissionsOf(['read']))).toBe('https://hooks.example.com/…');
    expect(urlAsSeenWith(url, permissionsOf(['webhook:read', 'webhook:list', 'webhook:test']))).toBe('https://hooks.example.com/…');
  });
});
