/**
 * Staff sign-in on the local stack (bin/local/stack.ts `consoleOidc`, docs/behaviour.md#staff-sign-in):
 * the setting reaches the functions as on AWS (`CONSOLE_OIDC`), a loopback issuer is allowed here,
 * the console page names a loopback provider whose discovery answers, the stack gives the redirect
 * URI to register, and a value the setting's parser refuses fails the start with its problems.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../lambdas/contract/deployment';
import { startTestApi, type TestApi } from '../helpers/local-api';

/** A provider's discovery document on loopback (the full provider is test/support's; the page needs only this). */
async function discoveryServer(): Promise<{ issuer: string; close(): Promise<void> }> {
  let issuer = '';
  const server: Server = createServer((req, res) => {
    if (req.url !== '/.well-known/openid-configuration') return void res.writeHead(404).end();
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(
        JSON.stringify({ issuer, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks` }),
      );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { issuer, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const metaOf = (html: string): Record<string, unknown> | null => {
  const content = /<meta name="console-oidc" content="([^"]*)">/.exec(html)?.[1];
  return content === undefined
    ? null
    : (JSON.parse(content.replace(/&#(\d+);/g, (_e, c: string) => String.fromCharCode(Number(c)))) as Record<string, unknown>);
};

describe('a local stack with consoleOidc', () => {
  let api: TestApi;
  let provider: Awaited<ReturnType<typeof discoveryServer>>;

  beforeAll(async () => {
    provider = await discoveryServer();
    api = await startTestApi({
      schedules: false,
      consoleOidc: { issuer: provider.issuer, clientId: 'local-console', roles: { admin: ['webhooks-admins'] }, name: 'Local SSO' },
    });
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await provider?.close();
  });

  it('hands the functions the parsed setting, as the stack does on AWS, and gives the redirect URI to register', () => {
    expect(JSON.parse(process.env[ENV.CONSOLE_OIDC]!)).toEqual({
      issuer: provider.issuer,
      clientId: 'local-console',
      groupsClaim: 'groups',
      roles: { read: [], write: [], admin: ['webhooks-admins'] },
      trustEmailFromIssuer: false,
      scopes: ['openid', 'email', 'profile'],
      name: 'Local SSO',
    });
    expect(api.consoleOidcRedirectUri).toBe(`${api.apiUrl}/console/`);
  });

  it("serves a console page naming the provider, its endpoints and this console's address, with connect-src to it", async () => {
    const page = await fetch(`${api.apiUrl}/console`);
    expect(page.status).toBe(200);
    expect(metaOf(await page.text())).toEqual({
      name: 'Local SSO',
      issuer: provider.issuer,
      clientId: 'local-console',
      scopes: ['openid', 'email', 'profile'],
      authorizationEndpoint: `${provider.issuer}/auth`,
      tokenEndpoint: `${provider.issuer}/token`,
      redirectUri: `${api.apiUrl}/console/`,
    });
    expect(page.headers.get('content-security-policy')).toContain(`connect-src 'self' ${provider.issuer};`);
  });
});

describe('a local stack with a consoleOidc its parser refuses', () => {
  it('fails the start, naming each problem', async () => {
    await expect(
      startTestApi({ schedules: false, consoleOidc: { issuer: 'http://idp.example.com', clientId: '', roles: {} } }),
    ).rejects.toThrow(
      /CONSOLE_OIDC must be the consoleOidc setting as JSON.*consoleOidc\.issuer.*consoleOidc\.clientId.*at least one group/,
    );
  }, 120_000);

  it('fails the start from a CONSOLE_OIDC that is not JSON', async () => {
    const saved = process.env[ENV.CONSOLE_OIDC];
    process.env[ENV.CONSOLE_OIDC] = '{issuer: nope';
    try {
      await expect(startTestApi({ schedules: false })).rejects.toThrow(/CONSOLE_OIDC must be the consoleOidc setting as JSON.*not JSON/);
    } finally {
      if (saved === undefined) delete process.env[ENV.CONSOLE_OIDC];
      else process.env[ENV.CONSOLE_OIDC] = saved;
    }
  }, 120_000);
});
