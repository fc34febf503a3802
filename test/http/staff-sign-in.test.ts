/**
 * Staff sign-in end to end on the local stack (docs/behaviour.md#staff-sign-in), against a real
 * OpenID provider on loopback (test/support/oidc-issuer.ts): nonces, ID token verification (each
 * refusal), roles from groups, the `wss_` session on REST and MCP across workspaces, revoking and
 * signing out, the workspaces a caller may open, and who did what in the audit log and the
 * workspace's own views.
 */
import { randomBytes } from 'node:crypto';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseConsoleOidc } from '../../lambdas/contract/console-oidc';
import { isAppError } from '../../lambdas/contract/errors';
import { createEventCatalogue } from '../../lambdas/domain/event-catalogue';
import { idTokenVerifier } from '../../lambdas/identity/id-token-verifier';
import { providerDiscovery } from '../../lambdas/identity/oidc-discovery';
import type { OperationDeps } from '../../lambdas/operations/context';
import { createConsoleSession } from '../../lambdas/operations/staff-sessions';
import { keys } from '../../lambdas/store/table-schema';
import { createWorkspace } from '../../lambdas/store/workspaces';
import { testSealer } from '../helpers/pipeline';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { signInThroughLoginPage, startOidcIssuer, TEST_STAFF_ROLES, type OidcIssuer } from '../support/oidc-issuer';

let api: TestApi;
let idp: OidcIssuer;
const clients: Client[] = [];
const previousSetting = process.env.CONSOLE_OIDC;
const OTHER = 'globex';
const ERASING = 'initech';

beforeAll(async () => {
  idp = await startOidcIssuer({ redirectUris: ['http://127.0.0.1:9/console/'] });
  // As `npm start` takes it: the stage setting as JSON (its functions read it when they start).
  process.env.CONSOLE_OIDC = JSON.stringify({ issuer: idp.issuer, clientId: idp.clientId, roles: TEST_STAFF_ROLES });
  api = await startTestApi({ schedules: false, onPipelineError: () => undefined });
  const now = new Date();
  await createWorkspace(api.table, { slug: OTHER, name: 'Globex' }, now);
  await createWorkspace(api.table, { slug: ERASING, name: 'Initech' }, now);
  await api.table.doc.send(
    new UpdateCommand({
      TableName: api.table.tableName,
      Key: keys.workspace(ERASING),
      UpdateExpression: 'SET erasingJobId = :j',
      ExpressionAttributeValues: { ':j': 'job-1' },
    }),
  );
});
afterEach(() => {
  vi.useRealTimers();
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await api?.close();
  await idp?.close();
  if (previousSetting === undefined) delete process.env.CONSOLE_OIDC;
  else process.env.CONSOLE_OIDC = previousSetting;
});

interface Person {
  email: string;
  emailVerified?: boolean;
  groups: string[];
}
const ANA: Person = { email: 'ana@staff.test', groups: ['webhooks-admins'] };
const RUI: Person = { email: 'rui@staff.test', groups: ['webhooks-support'] };
const OLI: Person = { email: 'oli@staff.test', groups: ['webhooks-oncall', 'marketing'] };
const NOA: Person = { email: 'noa@staff.test', groups: ['marketing'] };
const EVE: Person = { email: 'eve@staff.test', emailVerified: false, groups: ['webhooks-admins'] };

async function nonce(): Promise<string> {
  const res = await api.call('POST', '/console-sessions/nonces', { token: null });
  expect([res.status, res.headers.get('cache-control')]).toEqual([201, 'no-store']);
  return res.body.nonce as string;
}

/** An ID token for `person` with a fresh nonce of the service, signed by the provider's current key (`claims` and `opts` override). */
async function idTokenFor(person: Person, claims: Record<string, unknown> = {}, opts?: Parameters<OidcIssuer['signIdToken']>[1]) {
  return idp.signIdToken(
    {
      sub: person.email,
      email: person.email,
      email_verified: person.emailVerified ?? true,
      groups: person.groups,
      nonce: await nonce(),
      ...claims,
    },
    opts,
  );
}

const signIn = (idToken: string) => api.call('POST', '/console-sessions', { token: null, body: { idToken } });

async function sessionOf(person: Person): Promise<{ token: string; sessionId: string; role: string }> {
  const res = await signIn(await idTokenFor(person));
  expect([res.status, res.text]).toEqual([200, expect.any(String)]);
  return res.body;
}

/** The refusal of a sign-in: status, tag, and the detail (which must never echo the token). */
async function refused(idToken: string) {
  const res = await signIn(idToken);
  expect(res.text).not.toContain(idToken);
  return { status: res.status, tag: res.body?.tag as string, detail: res.body?.detail as string };
}

async function staffSessionItems(): Promise<number> {
  const out = await api.table.doc.send(
    new QueryCommand({
      TableName: api.table.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.staffSessionsPk },
    }),
  );
  return out.Count ?? 0;
}

const hookBody = { url: 'https://hooks.example.com/in', eventTypes: ['webhook.test_event'] };

describe('staff sign-in', () => {
  it('signs each role in: a wss_ Bearer session for an hour, no-store, with its role', async () => {
    for (const [person, role] of [
      [ANA, 'admin'],
      [OLI, 'write'],
      [RUI, 'read'],
    ] as const) {
      const idToken = await idTokenFor(person);
      const before = Date.now();
      const res = await signIn(idToken);
      expect([res.status, res.text]).toEqual([200, expect.any(String)]);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('set-cookie')).toBeNull();
      expect(res.body).toEqual({
        token: expect.stringMatching(/^wss_[A-Za-z0-9_-]{43}$/),
        sessionId: expect.stringMatching(/^wcs_[0-9A-HJKMNP-TV-Z]{26}$/),
        email: person.email,
        role,
        expiresAt: expect.any(String),
      });
      const lifetime = Date.parse(res.body.expiresAt) - before;
      expect(lifetime).toBeGreaterThan(3_590_000);
      expect(lifetime).toBeLessThanOrEqual(3_601_000);
    }
  });

  it('signs a person in with the ID token the provider issues through its login page', async () => {
    const idToken = await signInThroughLoginPage(idp, {
      login: 'ana@staff.test',
      password: 'ana-pass',
      nonce: await nonce(),
      redirectUri: 'http://127.0.0.1:9/console/',
    });
    const res = await signIn(idToken);
    expect([res.status, res.body.email, res.body.role]).toEqual([200, 'ana@staff.test', 'admin']);
  });

  it('refuses a wrong audience, another issuer, an expired token, an old iat, an unknown key, alg none and HS256: 401 naming the check', async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases: [string, Promise<string>, RegExp][] = [
      ['wrong audience', idTokenFor(ANA, { aud: 'another-client' }), /audience \(aud\)/],
      ['another issuer', idTokenFor(ANA, { iss: 'http://127.0.0.1:1/other' }), /issuer \(iss\)/],
      ['azp of another client', idTokenFor(ANA, { aud: [idp.clientId, 'x'], azp: 'x' }), /azp/],
      ['expired', idTokenFor(ANA, { iat: now - 400, exp: now - 120 }), /expired \(exp\)/],
      // Past the 10 minutes and the 60 s of clock skew allowed.
      ['iat too old', idTokenFor(ANA, { iat: now - 12 * 60, exp: now + 300 }), /issue time \(iat\)/],
      ['no iat', idTokenFor(ANA, { iat: undefined }), /iat/],
      ['unknown key', idTokenFor(ANA, {}, { key: 'unknown' }), /signature/],
      ['unknown kid', idTokenFor(ANA, {}, { header: { kid: 'nobody' } }), /not signed by a key the issuer publishes/],
      ['alg none', idTokenFor(ANA, {}, { alg: 'none' }), /algorithm is not allowed/],
      ['HS256 with the client id', idTokenFor(ANA, {}, { alg: 'HS256' }), /algorithm is not allowed/],
      ['not a JWT', Promise.resolve('not.a.jwt'), /well-formed/],
    ];
    for (const [name, token, check] of cases) {
      const answer = await refused(await token);
      expect([name, answer.status, answer.tag]).toEqual([name, 401, 'InvalidIdToken']);
      expect([name, answer.detail]).toEqual([name, expect.stringMatching(check)]);
    }
  });

  it('uses a nonce once: a replay, a nonce never issued and one of two racing sign-ins are refused', async () => {
    const token = await idTokenFor(ANA);
    expect((await signIn(token)).status).toBe(200);
    expect(await refused(token)).toMatchObject({ status: 401, tag: 'InvalidIdToken', detail: expect.stringMatching(/nonce/) });
    const forged = await idTokenFor(ANA, { nonce: randomBytes(32).toString('base64url') });
    expect(await refused(forged)).toMatchObject({ status: 401, tag: 'InvalidIdToken', detail: expect.stringMatching(/nonce/) });
    const shared = await nonce();
    const [a, b] = await Promise.all([idTokenFor(ANA, { nonce: shared }), idTokenFor(RUI, { nonce: shared })]);
    const answers = await Promise.all([signIn(a), signIn(b)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it('follows a provider key rotation without restarting, once the key set may be refetched', async () => {
    expect((await signIn(await idTokenFor(RUI))).status).toBe(200);
    await idp.rotateKeys();
    // The verifier refetches the set for a key it does not know at most every 30 s.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 31_000 });
    const res = await signIn(await idTokenFor(RUI));
    expect([res.status, res.text]).toEqual([200, expect.any(String)]);
  });

  it('refuses an unverified email, and a person in no group (403, no session written)', async () => {
    expect(await refused(await idTokenFor(EVE))).toMatchObject({
      status: 401,
      tag: 'InvalidIdToken',
      detail: expect.stringMatching(/email is not verified/),
    });
    const before = await staffSessionItems();
    const res = await signIn(await idTokenFor(NOA));
    expect([res.status, res.body.tag]).toEqual([403, 'NoConsoleAccess']);
    expect(await staffSessionItems()).toBe(before);
  });

  it('lets a read session read two workspaces and refuses its writes; a missing or erasing workspace is 404', async () => {
    const { token } = await sessionOf(RUI);
    for (const slug of [api.workspace, OTHER]) {
      expect((await api.call('GET', `/workspaces/${slug}/webhooks`, { token })).status).toBe(200);
      const write = await api.call('POST', `/workspaces/${slug}/webhooks`, { token, body: hookBody });
      expect([write.status, write.body.tag]).toEqual([403, 'Forbidden']);
    }
    for (const slug of ['no-such-workspace', ERASING]) {
      const res = await api.call('GET', `/workspaces/${slug}/webhooks`, { token });
      expect([slug, res.status, res.body.tag]).toEqual([slug, 404, 'WorkspaceNotFound']);
    }
  });

  it('ends a session after its hour: 401', async () => {
    const { token } = await sessionOf(OLI);
    expect((await api.call('GET', `/workspaces/${OTHER}/webhooks`, { token })).status).toBe(200);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 3601_000 });
    expect((await api.call('GET', `/workspaces/${OTHER}/webhooks`, { token })).status).toBe(401);
    expect((await api.call('POST', `/workspaces/${OTHER}/webhooks`, { token, body: hookBody })).status).toBe(401);
  });

  it('revokes: an admin ends another session, a write session cannot, anyone signs out; workspace tokens get 403', async () => {
    const admin = await sessionOf(ANA);
    const writer = await sessionOf(OLI);
    const reader = await sessionOf(RUI);
    const listed = await api.call('GET', '/console-sessions', { token: admin.token });
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((s: { sessionId: string }) => s.sessionId)).toEqual(
      expect.arrayContaining([admin.sessionId, writer.sessionId, reader.sessionId]),
    );
    expect(listed.text).not.toContain(reader.token);
    expect((await api.call('GET', '/console-sessions', { token: writer.token })).status).toBe(403);

    const denied = await api.call('DELETE', `/console-sessions/${reader.sessionId}`, { token: writer.token });
    expect([denied.status, denied.body.tag]).toEqual([403, 'Forbidden']);
    expect((await api.call('DELETE', `/console-sessions/${reader.sessionId}`, { token: admin.token })).status).toBe(204);
    expect((await api.call('POST', `/workspaces/${OTHER}/webhooks`, { token: reader.token, body: hookBody })).status).toBe(401);
    const again = await api.call('DELETE', `/console-sessions/${reader.sessionId}`, { token: admin.token });
    expect([again.status, again.body.tag]).toEqual([404, 'ConsoleSessionNotFound']);

    expect((await api.call('DELETE', `/console-sessions/${writer.sessionId}`, { token: writer.token })).status).toBe(204);
    expect((await api.call('GET', `/workspaces/${OTHER}/webhooks`, { token: writer.token })).status).toBe(401);

    // The stack's seed token is a workspace admin token.
    expect((await api.call('GET', '/console-sessions')).status).toBe(403);
    expect((await api.call('DELETE', `/console-sessions/${admin.sessionId}`)).status).toBe(403);
  });

  it('lists the workspaces a caller may open: a token its own, a portal session its own, staff every one not being erased', async () => {
    const own = await api.call('GET', '/workspaces');
    expect([own.status, own.body]).toEqual([200, { items: [{ slug: api.workspace, name: expect.any(String) }], nextCursor: null }]);
    const link = await api.call('POST', `/workspaces/${api.workspace}/portal-sessions`, { body: {} });
    const code = new URL(link.body.url as string).hash.replace(/^#portal=/, '');
    const portal = await api.call('POST', '/portal-sessions/exchange', { token: null, body: { code } });
    const viaPortal = await api.call('GET', '/workspaces', { token: portal.body.token });
    expect(viaPortal.body.items.map((w: { slug: string }) => w.slug)).toEqual([api.workspace]);

    const { token } = await sessionOf(RUI);
    const all = await api.call('GET', '/workspaces', { token });
    expect(all.status).toBe(200);
    const slugs = all.body.items.map((w: { slug: string }) => w.slug);
    expect(slugs).toEqual([...slugs].sort());
    expect(slugs).toEqual(expect.arrayContaining([api.workspace, OTHER]));
    expect(slugs).not.toContain(ERASING);
    expect(all.body.items.find((w: { slug: string }) => w.slug === OTHER)).toEqual({ slug: OTHER, name: 'Globex' });
  });

  it('names the person in the audit log, and platform staff (no email) in the workspace’s tokens and portal sessions', async () => {
    const { token, sessionId } = await sessionOf(ANA);
    const made = await api.call('POST', `/workspaces/${OTHER}/api-tokens`, { token, body: { name: 'by staff', scopes: ['read'] } });
    expect(made.status).toBe(201);
    expect(made.body.createdBy).toEqual({ kind: 'staff', id: 'staff' });
    const link = await api.call('POST', `/workspaces/${OTHER}/portal-sessions`, { token, body: {} });
    expect(link.status).toBe(201);

    const audit = await api.call('GET', `/workspaces/${OTHER}/audit-events`, { token });
    const entry = audit.body.items.find((e: { action: string; targetId: string }) => e.action === 'api_token.created');
    expect(entry.actor).toEqual({ kind: 'staff', id: sessionId, email: ANA.email });
    expect(entry.actorId).toBe(sessionId);

    const tokens = await api.call('GET', `/workspaces/${OTHER}/api-tokens`, { token });
    expect(tokens.body.items.find((t: { tokenId: string }) => t.tokenId === made.body.tokenId).createdBy).toEqual({
      kind: 'staff',
      id: 'staff',
    });
    expect(tokens.text).not.toContain(ANA.email);
    const sessions = await api.call('GET', `/workspaces/${OTHER}/portal-sessions`, { token });
    expect(sessions.body.items[0].createdBy).toEqual({ kind: 'staff', id: 'staff' });
    expect(sessions.text).not.toContain(ANA.email);
    // Tokens made otherwise say who made them.
    const seeded = await api.call('GET', `/workspaces/${api.workspace}/api-tokens`);
    expect(seeded.body.items.map((t: { createdBy: unknown }) => t.createdBy)).toContainEqual({ kind: 'system', id: 'system' });
  });

  it('works over MCP: list_workspaces with a staff session, and a tool on another workspace', async () => {
    const { token } = await sessionOf(RUI);
    const client = new Client({ name: 'staff-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(api.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    );
    clients.push(client);
    const listed = (await client.callTool({ name: 'list_workspaces', arguments: {} })) as { isError?: boolean; structuredContent?: any };
    expect(listed.isError ?? false).toBe(false);
    expect(listed.structuredContent.items.map((w: { slug: string }) => w.slug)).toEqual(expect.arrayContaining([api.workspace, OTHER]));
    const hooks = (await client.callTool({ name: 'list_webhooks', arguments: { slug: OTHER } })) as { isError?: boolean };
    expect(hooks.isError ?? false).toBe(false);
    const write = (await client.callTool({ name: 'create_webhook', arguments: { slug: OTHER, ...hookBody } })) as {
      isError?: boolean;
      structuredContent?: any;
    };
    expect([write.isError, write.structuredContent?.tag]).toEqual([true, 'Forbidden']);
  });
});

describe('staff sign-in settings', () => {
  const depsWith = (trustEmailFromIssuer: boolean, issuer = idp.issuer): OperationDeps => {
    const settings = parseConsoleOidc({ issuer, clientId: idp.clientId, roles: TEST_STAFF_ROLES, trustEmailFromIssuer }, [], true)!;
    return {
      table: api.table,
      now: () => new Date(),
      eventTypes: createEventCatalogue(),
      urlPolicy: { allowLoopback: true },
      queue: { send: async () => undefined },
      secretSealer: testSealer,
      consoleOidc: { settings, verifyIdToken: idTokenVerifier(settings, providerDiscovery(settings.issuer)) },
    };
  };
  const attempt = async (deps: OperationDeps, idToken: string) => {
    try {
      return await createConsoleSession(deps, { clientAddress: '127.0.0.1' }, { params: {}, query: undefined, body: { idToken } });
    } catch (e) {
      if (isAppError(e)) return { status: e.status, tag: e.tag };
      throw e;
    }
  };

  it('accepts an unverified email when the setting trusts the issuer', async () => {
    expect(await attempt(depsWith(false), await idTokenFor(EVE))).toEqual({ status: 401, tag: 'InvalidIdToken' });
    expect(await attempt(depsWith(true), await idTokenFor(EVE))).toMatchObject({ email: EVE.email, role: 'admin' });
  });

  it('answers 502 when the provider cannot be reached, and 404 StaffSignInDisabled without the setting', async () => {
    expect(await attempt(depsWith(false, 'http://127.0.0.1:1'), await idTokenFor(ANA))).toEqual({ status: 502, tag: 'BadGateway' });
    const { consoleOidc: _off, ...without } = depsWith(false);
    expect(await attempt(without, await idTokenFor(ANA))).toEqual({ status: 404, tag: 'StaffSignInDisabled' });
  });
});
