/**
 * The console page with staff sign-in (lambdas/http/console.ts, lambdas/functions/serve-console.ts;
 * docs/behaviour.md#staff-sign-in): with the stage's `consoleOidc` and a provider whose discovery
 * answers, the page carries `<meta name="console-oidc">` with the provider's endpoints and its CSP
 * lets the page fetch from the token endpoint's origin; without the setting, or when discovery
 * fails, no tag, the CSP of before, and (for a failure) a logged error. The provider here is a real
 * loopback HTTP server answering the discovery document.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CONSOLE_INDEX, ENV } from '../../lambdas/contract/deployment';
import { CONSOLE_CSP, consoleResponse, staffSignInMeta } from '../../lambdas/http/console';
import type { ConsoleOidcTag } from '../../lambdas/contract/console-oidc';
import { providerDiscovery } from '../../lambdas/identity/oidc-discovery';

const PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Webhooks</title><script type="module" src="console/console-AB12CD34.js"></script></head><body><div id="app"></div></body></html>';
const CONSOLE_URL = 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod/console/';

/** A provider's discovery document on loopback: how many times it was asked, and what it answers. */
interface Provider {
  issuer: string;
  requests: number;
  answer: (issuer: string) => { status: number; body: unknown };
  close(): Promise<void>;
}

async function startProvider(): Promise<Provider> {
  const provider = {
    issuer: '',
    requests: 0,
    answer: (issuer: string) => ({
      status: 200,
      body: {
        issuer,
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
      },
    }),
  } as Provider;
  const server: Server = createServer((req, res) => {
    if (req.url !== '/.well-known/openid-configuration') return void res.writeHead(404).end();
    provider.requests += 1;
    const { status, body } = provider.answer(provider.issuer);
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  provider.issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  provider.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return provider;
}

/** The setting as the stack hands it to the function. */
const settingFor = (issuer: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ issuer, clientId: 'webhooks-console', roles: { read: ['webhooks-support'] }, name: 'Example SSO', ...extra });

/** The console-oidc meta tags of a page, their content attribute decoded. */
function metaTags(html: string): unknown[] {
  return [...html.matchAll(/<meta name="console-oidc" content="([^"]*)">/g)].map((m) =>
    JSON.parse(m[1]!.replace(/&#(\d+);/g, (_e, code: string) => String.fromCharCode(Number(code)))),
  );
}

/** The page without its console-oidc tag: what it was before the tag went in. */
const withoutTag = (html: string) => html.replace(/<meta name="console-oidc" content="[^"]*">/, '');

const directives = (csp: string) => new Map(csp.split('; ').map((d) => [d.split(' ')[0]!, d.split(' ').slice(1)]));

let provider: Provider;
beforeAll(async () => {
  provider = await startProvider();
});
afterAll(async () => {
  await provider.close();
});
afterEach(() => {
  provider.answer = (issuer) => ({
    status: 200,
    body: { issuer, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks` },
  });
  vi.restoreAllMocks();
});

describe('staffSignInMeta', () => {
  it("gives the setting's public facts and the provider's discovered endpoints, with the console's address as the redirect URI", async () => {
    const errors: string[] = [];
    const meta = await staffSignInMeta(
      settingFor(provider.issuer, { scopes: ['openid', 'email', 'groups'] }),
      CONSOLE_URL,
      (issuer) => providerDiscovery(issuer),
      (m) => errors.push(m),
    );
    expect(meta).toEqual({
      name: 'Example SSO',
      issuer: provider.issuer,
      clientId: 'webhooks-console',
      scopes: ['openid', 'email', 'groups'],
      authorizationEndpoint: `${provider.issuer}/auth`,
      tokenEndpoint: `${provider.issuer}/token`,
      redirectUri: CONSOLE_URL,
    });
    expect(errors).toEqual([]);
    // Nothing the console must not see: the roles and the groups claim stay on the server.
    expect(Object.keys(meta!)).not.toContain('roles');
  });

  it('is null without the setting, and asks no provider', async () => {
    const before = provider.requests;
    const onError = vi.fn();
    expect(await staffSignInMeta(undefined, CONSOLE_URL, (issuer) => providerDiscovery(issuer), onError)).toBeNull();
    expect(await staffSignInMeta('', CONSOLE_URL, (issuer) => providerDiscovery(issuer), onError)).toBeNull();
    expect(onError).not.toHaveBeenCalled();
    expect(provider.requests).toBe(before);
  });

  it('is null, with an error logged, when discovery fails: an error status, another issuer, a missing endpoint, no provider', async () => {
    const cases: [string, (issuer: string) => { status: number; body: unknown }][] = [
      ['500', () => ({ status: 500, body: {} })],
      [
        'another issuer',
        () => ({ status: 200, body: { issuer: 'https://evil.example', authorization_endpoint: 'https://evil.example/a' } }),
      ],
      [
        'no token endpoint',
        (issuer) => ({ status: 200, body: { issuer, authorization_endpoint: `${issuer}/auth`, jwks_uri: `${issuer}/jwks` } }),
      ],
    ];
    for (const [what, answer] of cases) {
      provider.answer = answer;
      const onError = vi.fn();
      expect(
        await staffSignInMeta(settingFor(provider.issuer), CONSOLE_URL, (issuer) => providerDiscovery(issuer), onError),
        what,
      ).toBeNull();
      expect(onError, what).toHaveBeenCalledOnce();
      expect(onError.mock.calls[0]![0], what).toMatch(/discovery at http:\/\/127\.0\.0\.1:\d+ failed/);
      expect(onError.mock.calls[0]![1], what).toBeInstanceOf(Error);
    }
    // A provider that is not there at all (a closed port).
    const gone = await startProvider();
    await gone.close();
    const onError = vi.fn();
    expect(await staffSignInMeta(settingFor(gone.issuer), CONSOLE_URL, (issuer) => providerDiscovery(issuer), onError)).toBeNull();
    expect(onError).toHaveBeenCalledOnce();
  });

  it('is null, with an error logged, for a setting that is not one, or without the console address', async () => {
    for (const [raw, url, problem] of [
      ['{not json', CONSOLE_URL, /not JSON/],
      [JSON.stringify({ issuer: provider.issuer }), CONSOLE_URL, /consoleOidc.clientId/],
      [settingFor(provider.issuer), undefined, /CONSOLE_URL is not set/],
    ] as const) {
      const onError = vi.fn();
      expect(await staffSignInMeta(raw, url, (issuer) => providerDiscovery(issuer), onError)).toBeNull();
      expect(onError.mock.calls[0]![0]).toMatch(problem);
    }
  });
});

describe('the console page with staff sign-in', () => {
  const meta: ConsoleOidcTag = {
    name: 'Example SSO',
    issuer: 'https://login.example.com',
    clientId: 'webhooks-console',
    scopes: ['openid', 'email'],
    authorizationEndpoint: 'https://login.example.com/oauth2/v1/authorize',
    tokenEndpoint: 'https://tokens.example.net:8443/oauth2/v1/token',
    redirectUri: CONSOLE_URL,
  };
  const read = (name: string) => (name === CONSOLE_INDEX ? Buffer.from(PAGE) : undefined);

  it('carries one console-oidc meta tag in the head, and lets the page connect to the token endpoint origin only', () => {
    for (const path of ['/console', '/console/']) {
      const res = consoleResponse(path, read, [], meta)!;
      expect(metaTags(res.body)).toEqual([meta]);
      expect(res.body).toMatch(/<meta name="console-oidc" content="[^"]*"><\/head>/);
      const csp = directives(res.headers!['content-security-policy'] as string);
      expect(csp.get('connect-src')).toEqual(["'self'", 'https://tokens.example.net:8443']);
      // Everything else is the policy of before.
      expect(res.headers!['content-security-policy']).toBe(
        CONSOLE_CSP.replace("connect-src 'self'", "connect-src 'self' https://tokens.example.net:8443"),
      );
    }
  });

  it('keeps the page and its policy as before without staff sign-in', () => {
    const res = consoleResponse('/console', read, [], null)!;
    expect(res.body).toBe(PAGE);
    expect(res.headers!['content-security-policy']).toBe(CONSOLE_CSP);
  });

  it('escapes a hostile provider name: the tag stays one attribute, the page gains no element, the JSON reads back whole', () => {
    const hostile = { ...meta, name: `"><script>alert(1)</script><meta name='x' content="&amp;` };
    const res = consoleResponse('/console', read, [], hostile)!;
    expect(res.body).not.toContain('<script>alert');
    expect(withoutTag(res.body)).toBe(PAGE);
    expect(metaTags(res.body)).toEqual([hostile]);
    const tag = /<meta name="console-oidc" content="[^"]*">/.exec(res.body)![0];
    expect(tag.slice('<meta name="console-oidc" content="'.length, -2)).not.toMatch(/[<>"']/);
  });

  it('serves the assets as before, with no tag to carry', () => {
    const asset = consoleResponse(
      '/console/console-AB12CD34.js',
      (name) => (name === 'console-AB12CD34.js' ? Buffer.from('x') : undefined),
      [],
      meta,
    )!;
    expect(asset.body).toBe('x');
  });
});

describe('the serve-console function', () => {
  let dir: string;
  let handler: (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;
  const saved = { ...process.env };
  const get = (path: string) => handler({ path, requestContext: { requestId: 'r' } } as APIGatewayProxyEvent);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'console-oidc-'));
    writeFileSync(join(dir, CONSOLE_INDEX), PAGE);
    process.env[ENV.CONSOLE_DIR] = dir;
    ({ handler } = await import('../../lambdas/functions/serve-console'));
  });
  afterAll(() => {
    process.env = saved;
    rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => {
    delete process.env[ENV.CONSOLE_OIDC];
    delete process.env[ENV.CONSOLE_URL];
  });

  it("names the stage's provider on the page, asking its discovery once for many page loads", async () => {
    process.env[ENV.CONSOLE_OIDC] = settingFor(provider.issuer);
    process.env[ENV.CONSOLE_URL] = CONSOLE_URL;
    const before = provider.requests;
    const first = await get('/console');
    expect(metaTags(first.body)).toEqual([
      expect.objectContaining({ name: 'Example SSO', tokenEndpoint: `${provider.issuer}/token`, redirectUri: CONSOLE_URL }),
    ]);
    expect(directives(first.headers!['content-security-policy'] as string).get('connect-src')).toEqual(["'self'", provider.issuer]);
    for (let i = 0; i < 3; i++) expect(metaTags((await get('/console/')).body)).toHaveLength(1);
    expect(provider.requests - before).toBe(1);
  });

  it('serves the page of before without the setting', async () => {
    const res = await get('/console');
    expect(res.body).toBe(PAGE);
    expect(res.headers!['content-security-policy']).toBe(CONSOLE_CSP);
  });

  it('serves the page of before, logging an error, when the provider cannot be discovered', async () => {
    const gone = await startProvider();
    await gone.close();
    process.env[ENV.CONSOLE_OIDC] = settingFor(gone.issuer);
    process.env[ENV.CONSOLE_URL] = CONSOLE_URL;
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const res = await get('/console');
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(PAGE);
    expect(res.headers!['content-security-policy']).toBe(CONSOLE_CSP);
    // One JSON line at level ERROR naming the failed discovery (CloudWatch Logs keeps it as the function's log).
    const lines = logged.mock.calls.map(([line]) => JSON.parse(String(line)) as { level: string; message: string });
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 'ERROR', message: expect.stringContaining(`discovery at ${gone.issuer} failed`) }),
    );
    logged.mockRestore();
  });
});
