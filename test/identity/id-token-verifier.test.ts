/**
 * The ID token verifier against a provider whose keys cannot be had (docs/behaviour.md#staff-sign-in):
 * discovery answers but its key set is unreachable or not a key set, and the sign-in is a 502
 * `BadGateway` naming the provider, never a 500 or a 401 blaming the token.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAppError } from '../../lambdas/contract/errors';
import { idTokenVerifier } from '../../lambdas/identity/id-token-verifier';
import { providerDiscovery } from '../../lambdas/identity/oidc-discovery';
import { startOidcIssuer, type OidcIssuer } from '../support/oidc-issuer';

let idp: OidcIssuer;
let broken: Server;
let brokenIssuer: string;

beforeAll(async () => {
  idp = await startOidcIssuer();
  broken = createServer((req, res) => {
    if (req.url === '/.well-known/openid-configuration') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          issuer: brokenIssuer,
          authorization_endpoint: `${brokenIssuer}/auth`,
          token_endpoint: `${brokenIssuer}/token`,
          jwks_uri: `${brokenIssuer}/jwks`,
        }),
      );
    } else res.writeHead(500).end('down');
  });
  await new Promise<void>((ok) => broken.listen(0, '127.0.0.1', () => ok()));
  brokenIssuer = `http://127.0.0.1:${(broken.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await idp?.close();
  broken?.closeAllConnections();
  await new Promise<void>((ok) => (broken ? broken.close(() => ok()) : ok()));
});

async function outcome(promise: Promise<unknown>) {
  try {
    await promise;
    return { ok: true };
  } catch (e) {
    if (!isAppError(e)) throw e;
    return { status: e.status, tag: e.tag, detail: e.detail };
  }
}

describe('the ID token verifier', () => {
  it('answers 502 BadGateway when the key set cannot be fetched', async () => {
    const verify = idTokenVerifier({ issuer: brokenIssuer, clientId: idp.clientId }, providerDiscovery(brokenIssuer));
    const token = await idp.signIdToken({ iss: brokenIssuer, nonce: 'n' });
    expect(await outcome(verify(token))).toEqual({ status: 502, tag: 'BadGateway', detail: expect.stringContaining(brokenIssuer) });
  });

  it('verifies a good token and names the failed check without echoing the token', async () => {
    const verify = idTokenVerifier({ issuer: idp.issuer, clientId: idp.clientId }, providerDiscovery(idp.issuer));
    await expect(verify(await idp.signIdToken({ nonce: 'n1' }))).resolves.toMatchObject({ nonce: 'n1', iss: idp.issuer });
    const noNonce = await idp.signIdToken({});
    const refused = await outcome(verify(noNonce));
    expect(refused).toEqual({ status: 401, tag: 'InvalidIdToken', detail: expect.stringMatching(/nonce/) });
    expect(JSON.stringify(refused)).not.toContain(noNonce.split('.')[1]);
  });
});
