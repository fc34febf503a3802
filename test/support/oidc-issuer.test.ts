/**
 * The tests' OpenID provider itself (test/support/oidc-issuer.ts): discovery answers, the tokens it
 * signs verify against its published keys (before and after a rotation), a key it never published
 * does not, and a person signs in through its login page with the public client and PKCE.
 */
import { createLocalJWKSet, decodeJwt, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInThroughLoginPage, startOidcIssuer, type OidcIssuer } from './oidc-issuer';

const REDIRECT = 'http://127.0.0.1:9/console/';
let idp: OidcIssuer;

beforeAll(async () => {
  idp = await startOidcIssuer({ redirectUris: [REDIRECT] });
});
afterAll(async () => {
  await idp?.close();
});

async function discovery(): Promise<Record<string, string>> {
  const res = await fetch(`${idp.issuer}/.well-known/openid-configuration`);
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, string>;
}

async function publishedKeys(): Promise<JSONWebKeySet> {
  return (await (await fetch((await discovery()).jwks_uri!)).json()) as JSONWebKeySet;
}

describe('the test OpenID provider', () => {
  it('answers discovery naming itself', async () => {
    const doc = await discovery();
    expect(doc.issuer).toBe(idp.issuer);
    expect(doc.authorization_endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(doc.token_endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
  });

  it('signs tokens its published keys verify, also after a key rotation; a key it never published fails', async () => {
    const before = await idp.signIdToken({ nonce: 'n1' });
    const { payload } = await jwtVerify(before, createLocalJWKSet(await publishedKeys()), { issuer: idp.issuer, audience: idp.clientId });
    expect(payload.nonce).toBe('n1');
    const unknown = await idp.signIdToken({}, { key: 'unknown' });
    await expect(jwtVerify(unknown, createLocalJWKSet(await publishedKeys()))).rejects.toThrow(/signature/);
    const oldKid = (await publishedKeys()).keys[0]!.kid;
    await idp.rotateKeys();
    const keys = await publishedKeys();
    expect(keys.keys.map((k) => k.kid)).toEqual([expect.not.stringMatching(oldKid!), oldKid]);
    const after = await idp.signIdToken({});
    await expect(jwtVerify(after, createLocalJWKSet(keys))).resolves.toBeTruthy();
  });

  it('signs a person in through its login page with PKCE, the ID token carrying email and groups', async () => {
    const idToken = await signInThroughLoginPage(idp, {
      login: 'ana@staff.test',
      password: 'ana-pass',
      nonce: 'nonce-1',
      redirectUri: REDIRECT,
    });
    expect(decodeJwt(idToken)).toMatchObject({
      iss: idp.issuer,
      aud: idp.clientId,
      nonce: 'nonce-1',
      email: 'ana@staff.test',
      email_verified: true,
      groups: ['webhooks-admins'],
    });
  });
});
