/**
 * The console's half of staff sign-in (console/src/api/staff-protocol.ts, console/src/console-permissions.ts): the
 * provider tag it reads, the PKCE challenge, the authorization request, the provider's answer in
 * the address, and what a staff role lets the console show.
 */
import { describe, expect, it } from 'vitest';
import { authorizationUrl, parseOidcTag, parseStaffCallback, pkceChallenge, randomString } from '../../console/src/api/staff-protocol';
import { consolePermissions } from '../../console/src/console-permissions';
import { SCOPE_BUNDLES } from '../../lambdas/contract/permissions';

const TAG = {
  name: 'Acme SSO',
  issuer: 'https://sso.acme.test',
  clientId: 'webhooks-console',
  scopes: ['openid', 'email', 'groups'],
  authorizationEndpoint: 'https://sso.acme.test/oauth2/authorize?tenant=7',
  tokenEndpoint: 'https://sso.acme.test/oauth2/token',
  redirectUri: 'https://api.example.com/prod/console/',
};

describe('the provider tag', () => {
  it('reads the JSON the console page carries', () => {
    expect(parseOidcTag(JSON.stringify(TAG))).toEqual(TAG);
  });

  it.each([
    ['absent', null],
    ['not JSON', '{name'],
    ['without a token endpoint', JSON.stringify({ ...TAG, tokenEndpoint: undefined })],
    ['with a script URL for the provider', JSON.stringify({ ...TAG, authorizationEndpoint: 'javascript:alert(1)' })],
    ['with scopes that are not strings', JSON.stringify({ ...TAG, scopes: [1] })],
    ['with a blank name', JSON.stringify({ ...TAG, name: ' ' })],
  ])('offers token sign-in only when the tag is %s', (_, content) => {
    expect(parseOidcTag(content)).toBeNull();
  });
});

describe('PKCE', () => {
  it('makes the S256 challenge of RFC 7636 appendix B', async () => {
    expect(await pkceChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('makes verifiers of 43 base64url characters, new each time', () => {
    const a = randomString();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(randomString()).not.toBe(a);
  });
});

describe('the authorization request', () => {
  it('carries the client, the redirect, the scopes, the state, the nonce and the S256 challenge, keeping the endpoint’s own query', () => {
    const url = new URL(authorizationUrl(TAG, { state: 's-1', nonce: 'n-1', codeChallenge: 'c-1' }));
    expect(url.origin + url.pathname).toBe('https://sso.acme.test/oauth2/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      tenant: '7',
      client_id: 'webhooks-console',
      redirect_uri: 'https://api.example.com/prod/console/',
      response_type: 'code',
      scope: 'openid email groups',
      state: 's-1',
      nonce: 'n-1',
      code_challenge: 'c-1',
      code_challenge_method: 'S256',
    });
  });
});

describe("the provider's answer", () => {
  it('reads a code with its state', () => {
    expect(parseStaffCallback('?code=abc&state=s-1')).toEqual({ code: 'abc', state: 's-1' });
  });

  it('reads an error (the person declined) before any code', () => {
    expect(parseStaffCallback('?error=access_denied&error_description=End-User%20aborted&state=s-1')).toEqual({
      error: 'access_denied',
      description: 'End-User aborted',
      state: 's-1',
    });
  });

  it('is none for an address without one', () => {
    expect(parseStaffCallback('')).toBeNull();
    expect(parseStaffCallback('?state=s-1')).toBeNull();
  });
});

describe("a staff role's controls", () => {
  const everything = [...SCOPE_BUNDLES.admin];

  it('a read role gets no permission that changes anything, whatever the caller says', () => {
    const shown = consolePermissions(everything, undefined, { role: 'read' });
    expect([...shown].sort()).toEqual([...SCOPE_BUNDLES.read].sort());
    expect(shown.has('webhook:write')).toBe(false);
  });

  it('a write role can change endpoints but not tokens; an admin can do both', () => {
    const write = consolePermissions(everything, undefined, { role: 'write' });
    expect(write.has('webhook:write')).toBe(true);
    expect(write.has('token:write')).toBe(false);
    const admin = consolePermissions(everything, undefined, { role: 'admin' });
    expect(admin.has('token:write')).toBe(true);
  });
});
