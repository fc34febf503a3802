/**
 * A real OpenID Connect provider on loopback for the staff sign-in tests
 * (docs/behaviour.md#staff-sign-in): `oidc-provider` (OpenID Certified) with a public PKCE client,
 * test users and groups, its development login page (a login and a password field, for a browser),
 * and signing keys held here so a test can sign any ID token with the provider's current key, with
 * a key the provider never published, or with `none`/HS256.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import Provider, { type Configuration, type KoaContextWithOIDC } from 'oidc-provider';

/** A person at the test provider. */
export interface TestUser {
  /** The account id (the dev login page's "login" field takes it; `sub` of the person's tokens). */
  accountId: string;
  email: string;
  emailVerified: boolean;
  groups: string[];
  /** Shown to whoever fills the login page; the provider's dev login page does not check it. */
  password: string;
}

/** The groups of each staff role in the tests' `consoleOidc` setting. */
export const TEST_STAFF_ROLES = { admin: ['webhooks-admins'], write: ['webhooks-oncall'], read: ['webhooks-support'] };

/** The default people: an admin, a read-only supporter, one in no staff group, one whose email is not verified. */
const DEFAULT_TEST_USERS: readonly TestUser[] = [
  { accountId: 'ana@staff.test', email: 'ana@staff.test', emailVerified: true, groups: ['webhooks-admins'], password: 'ana-pass' },
  { accountId: 'rui@staff.test', email: 'rui@staff.test', emailVerified: true, groups: ['webhooks-support'], password: 'rui-pass' },
  { accountId: 'noa@staff.test', email: 'noa@staff.test', emailVerified: true, groups: ['marketing'], password: 'noa-pass' },
  { accountId: 'eve@staff.test', email: 'eve@staff.test', emailVerified: false, groups: ['webhooks-admins'], password: 'eve-pass' },
];

/** A running test provider. */
export interface OidcIssuer {
  /** `http://127.0.0.1:<port>`, exactly as its tokens carry it in `iss`. */
  issuer: string;
  clientId: string;
  users: TestUser[];
  /**
   * An ID token with `claims` over defaults (`iss` the issuer, `aud` the client id, `sub`, `iat`
   * now, `exp` in 5 minutes; a claim given as `undefined` is left out). `key: 'current'` (default)
   * signs with the key the provider signs with now; `'unknown'` with a key it never published
   * (same `kid`). `alg: 'none'` makes an unsecured token; `alg: 'HS256'` (or HS384/HS512) signs with
   * the client id as the shared secret. `header` overrides protected header fields.
   */
  signIdToken(
    claims: Record<string, unknown>,
    opts?: { alg?: string; key?: 'current' | 'unknown'; header?: Record<string, unknown> },
  ): Promise<string>;
  /** The provider publishes a new key first (the old one stays published) and signs with it from now on. */
  rotateKeys(): Promise<void>;
  close(): Promise<void>;
}

interface HeldKey {
  kid: string;
  privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  jwk: JWK;
}

async function newKey(kid = `k-${randomUUID()}`): Promise<HeldKey> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  return { kid, privateKey, jwk };
}

const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * Starts a provider on a free loopback port. `redirectUris` are the public client's (the console's
 * address, e.g. `<apiUrl>/console/`); the token endpoint answers CORS requests from their origins.
 */
export async function startOidcIssuer(
  options: { clientId?: string; redirectUris?: string[]; users?: TestUser[] } = {},
): Promise<OidcIssuer> {
  const clientId = options.clientId ?? 'webhooks-console';
  const redirectUris = options.redirectUris ?? ['http://127.0.0.1/console/'];
  const users = (options.users ?? DEFAULT_TEST_USERS).map((u) => ({ ...u, groups: [...u.groups] }));
  const allowedOrigins = new Set(redirectUris.map((u) => new URL(u).origin));
  const server: Server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let keys: HeldKey[] = [await newKey()];
  const cookieKeys = [randomUUID()];

  const configuration = (): Configuration => ({
    clients: [
      {
        client_id: clientId,
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: redirectUris,
        id_token_signed_response_alg: 'RS256',
      },
    ],
    jwks: { keys: keys.map((k) => k.jwk) },
    cookies: { keys: cookieKeys },
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: { openid: ['sub', 'groups'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    // The ID token carries every claim of the granted scopes (not only when no access token is issued).
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    ttl: { Interaction: 600, Grant: 3600, Session: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    features: { devInteractions: { enabled: true } },
    clientBasedCORS: (_ctx: KoaContextWithOIDC, origin: string) => allowedOrigins.has(origin),
    findAccount: (_ctx: KoaContextWithOIDC, id: string) => {
      const user = users.find((u) => u.accountId === id);
      if (!user) return undefined;
      return {
        accountId: user.accountId,
        claims: () => ({
          sub: user.accountId,
          email: user.email,
          email_verified: user.emailVerified,
          groups: user.groups,
          name: user.email,
        }),
      };
    },
    // The console is first party: no consent page, the requested scopes are granted at once.
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const oidc = ctx.oidc;
      const grantId = oidc.result?.consent?.grantId ?? oidc.session?.grantIdFor(oidc.client!.clientId);
      if (grantId) {
        const found = await oidc.provider.Grant.find(grantId);
        if (found) return found;
      }
      const grant = new oidc.provider.Grant({ clientId: oidc.client!.clientId, accountId: oidc.session!.accountId! });
      grant.addOIDCScope([...oidc.requestParamScopes].join(' '));
      await grant.save();
      return grant;
    },
  });

  let provider = new Provider(issuer, configuration());
  let handle = provider.callback();
  server.on('request', (req, res) => void handle(req, res));

  return {
    issuer,
    clientId,
    users,
    async signIdToken(claims, opts = {}) {
      const alg = opts.alg ?? 'RS256';
      const now = Math.floor(Date.now() / 1000);
      const payload: Record<string, unknown> = { iss: issuer, aud: clientId, sub: 'test-person', iat: now, exp: now + 300, ...claims };
      for (const [k, v] of Object.entries(payload)) if (v === undefined) delete payload[k];
      const current = keys[0]!;
      if (alg === 'none') return `${b64url({ alg: 'none', typ: 'JWT', ...opts.header })}.${b64url(payload)}.`;
      if (alg.startsWith('HS'))
        return new SignJWT(payload)
          .setProtectedHeader({ alg, typ: 'JWT', kid: current.kid, ...opts.header })
          .sign(new TextEncoder().encode(clientId));
      const key = opts.key === 'unknown' ? (await newKey(current.kid)).privateKey : current.privateKey;
      return new SignJWT(payload).setProtectedHeader({ alg, typ: 'JWT', kid: current.kid, ...opts.header }).sign(key);
    },
    async rotateKeys() {
      keys = [await newKey(), ...keys];
      // The provider reads its keys when built; the new one shares the in-memory store (sessions, grants).
      provider = new Provider(issuer, configuration());
      handle = provider.callback();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}

/**
 * What the console does in a browser, without one: the authorization request (with `nonce`, a
 * `state` and a PKCE challenge), the provider's login page filled with `login` and `password`,
 * the redirect back with a code, and the code traded at the token endpoint (as a CORS request from
 * the redirect URI's origin). The provider's ID token.
 */
export async function signInThroughLoginPage(
  idp: Pick<OidcIssuer, 'issuer' | 'clientId'>,
  options: { login: string; password: string; nonce: string; redirectUri: string; scope?: string },
): Promise<string> {
  const verifier = randomBytes(32).toString('base64url');
  const doc = (await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()) as Record<string, string>;
  const auth = new URL(doc.authorization_endpoint!);
  const params = {
    client_id: idp.clientId,
    response_type: 'code',
    redirect_uri: options.redirectUri,
    scope: options.scope ?? 'openid email profile',
    state: randomUUID(),
    nonce: options.nonce,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  };
  for (const [k, v] of Object.entries(params)) auth.searchParams.set(k, v);
  const jar = new Map<string, string>();
  const go = async (url: string, init: RequestInit = {}): Promise<Response> => {
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair = ''] = c.split(';');
      const i = pair.indexOf('=');
      jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return res;
  };
  const next = (res: Response) => new URL(res.headers.get('location') ?? '', idp.issuer).href;
  let res = await go(auth.href);
  res = await go(next(res));
  const page = await res.text();
  if (!/name="login"/.test(page) || !/name="password"/.test(page)) throw new Error(`no login page: ${page.slice(0, 300)}`);
  const action = new URL(/action="([^"]+)"/.exec(page)?.[1] ?? '', idp.issuer).href;
  res = await go(action, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ prompt: 'login', login: options.login, password: options.password }).toString(),
  });
  let location = next(res);
  // Back through the authorization endpoint (no consent page: the console is first party) to the console.
  for (let i = 0; i < 5 && !location.startsWith(options.redirectUri); i++) location = next(await go(location));
  const back = new URL(location);
  if (back.searchParams.get('state') !== params.state) throw new Error(`the provider answered ${location}`);
  const token = await fetch(doc.token_endpoint!, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(options.redirectUri).origin },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') ?? '',
      redirect_uri: options.redirectUri,
      client_id: idp.clientId,
      code_verifier: verifier,
    }).toString(),
  });
  if (token.status !== 200) throw new Error(`the token endpoint answered ${token.status}: ${await token.text()}`);
  if (token.headers.get('access-control-allow-origin') !== new URL(options.redirectUri).origin)
    throw new Error('the token endpoint does not allow the console origin (CORS)');
  return ((await token.json()) as { id_token: string }).id_token;
}
