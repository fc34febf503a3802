/**
 * The tests' OpenID provider itself (test/support/oidc-issuer.ts): discovery answers, the tokens it
 * signs verify against its published keys (before and after a rotation), a key it never published
 * does not, and a person signs in through its login page with the public client and PKCE.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createLocalJWKSet, decodeJwt, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOidcIssuer, type OidcIssuer } from './oidc-issuer';

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
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const doc = await discovery();
    const auth = new URL(doc.authorization_endpoint!);
    for (const [k, v] of Object.entries({
      client_id: idp.clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid email profile',
      state: 's1',
      nonce: 'nonce-1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }))
      auth.searchParams.set(k, v);
    const jar = new Map<string, string>();
    const go = async (url: string, init: RequestInit = {}): Promise<Response> => {
      const res = await fetch(url, {
        ...init,
        redirect: 'manual',
        headers: { ...(init.headers as Record<string, string>), cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
      });
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        const i = pair!.indexOf('=');
        jar.set(pair!.slice(0, i), pair!.slice(i + 1));
      }
      return res;
    };
    let res = await go(auth.href);
    let location = new URL(res.headers.get('location')!, idp.issuer).href;
    res = await go(location);
    const page = await res.text();
    expect(page).toMatch(/name="login"/);
    expect(page).toMatch(/name="password"/);
    const action = new URL(/action="([^"]+)"/.exec(page)![1]!, idp.issuer).href;
    res = await go(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ prompt: 'login', login: 'ana@staff.test', password: 'ana-pass' }).toString(),
    });
    // Back to the authorization endpoint, then (no consent page) to the console with a code.
    for (let i = 0; i < 5 && !location.startsWith(REDIRECT); i++) {
      location = new URL(res.headers.get('location')!, idp.issuer).href;
      if (!location.startsWith(REDIRECT)) res = await go(location);
    }
    const back = new URL(location);
    expect(back.searchParams.get('state')).toBe('s1');
    const code = back.searchParams.get('code')!;
    expect(code).toBeTruthy();
    const token = await fetch(doc.token_endpoint!, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://127.0.0.1:9' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        client_id: idp.clientId,
        code_verifier: verifier,
      }).toString(),
    });
    expect(token.status).toBe(200);
    expect(token.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:9');
    const { id_token: idToken } = (await token.json()) as { id_token: string };
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
