/**
 * Portal sessions end to end on the local stack (docs/behaviour.md#portal-sessions): a workspace
 * token mints a link, its code is exchanged once for a `whs_` token, and that token works on REST
 * and MCP within the session's permissions, event types and lifetime. Expiry against an authorizer
 * decision cached before it, and a revocation, are played on the REST handler with that cached
 * context, as API Gateway would call it.
 */
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { Logger } from '@aws-lambda-powertools/logger';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAppError, toProblem } from '../../lambdas/contract/errors';
import type { TokenOperationId } from '../../lambdas/contract/operations';
import { DEFAULT_QUOTAS } from '../../lambdas/contract/rate-limits';
import { createEventCatalogue } from '../../lambdas/domain/event-catalogue';
import { allowPolicy } from '../../lambdas/http/authorizer';
import { restHandler } from '../../lambdas/http/rest-handler';
import { resolveCaller } from '../../lambdas/operations/access';
import { issueToken } from '../../lambdas/operations/admin';
import type { OperationDeps, OperationImpl, SurfaceRuntime } from '../../lambdas/operations/context';
import { IMPLEMENTATIONS } from '../../lambdas/operations/index';
import { exchangePortalCode } from '../../lambdas/operations/portal-sessions';
import { memoryRateLimiter } from '../../lambdas/operations/rate-limiter';
import { testSealer } from '../helpers/pipeline';
import { startTestApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
const clients: Client[] = [];
const ws = () => `/workspaces/${api.workspace}`;

beforeAll(async () => {
  api = await startTestApi({ schedules: false, onPipelineError: () => undefined });
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await api?.close();
});

/** The operations' adapters on the stack's table, with a clock the test sets. */
function depsAt(now: () => Date): OperationDeps {
  return {
    table: api.table,
    now,
    eventTypes: createEventCatalogue(),
    urlPolicy: { allowLoopback: true },
    queue: { send: async () => undefined },
    secretSealer: testSealer,
  };
}

/** What the console does with a link: the code from its fragment, exchanged (the answer, or the problem). */
async function open(url: string, now: () => Date = () => new Date()) {
  const code = new URL(url).hash.replace(/^#portal=/, '');
  try {
    return { ok: true as const, session: await exchangePortalCode(depsAt(now), { code }) };
  } catch (e) {
    if (!isAppError(e)) throw e;
    return { ok: false as const, problem: toProblem(e, 'trace') };
  }
}

async function createSession(body: Record<string, unknown> = {}, token = api.token) {
  const res = await api.call('POST', `${ws()}/portal-sessions`, { token, body });
  expect([res.status, res.text]).toEqual([201, expect.any(String)]);
  return res.body as { sessionId: string; url: string; expiresAt: string };
}

async function openSession(body: Record<string, unknown> = {}) {
  const created = await createSession(body);
  const opened = await open(created.url);
  if (!opened.ok) throw new Error(`could not open: ${JSON.stringify(opened.problem)}`);
  return opened.session;
}

async function mcp(token: string): Promise<Client> {
  const c = new Client({ name: 'test', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(api.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  clients.push(c);
  return c;
}

const createBody = (types = ['webhook.test_event']) => ({ url: 'https://hooks.example.com/in', eventTypes: types });

describe('a portal link', () => {
  it('is the console with a code in its fragment; opened, it gives a whs_ token that works on REST and MCP', async () => {
    const before = Date.now();
    const created = await createSession({ expiresIn: 900 });
    expect(created.sessionId).toMatch(/^wps_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(created.url.startsWith(`${api.apiUrl}/console/#portal=`)).toBe(true);
    expect(created.url).toMatch(/#portal=[A-Za-z0-9_-]{43}$/);
    // Counted from creation.
    expect(Date.parse(created.expiresAt) - before).toBeGreaterThanOrEqual(900_000 - 1000);
    expect(Date.parse(created.expiresAt) - Date.now()).toBeLessThanOrEqual(900_000);

    const opened = await open(created.url);
    expect(opened.ok).toBe(true);
    if (!opened.ok) return;
    expect(opened.session).toEqual({
      token: expect.stringMatching(/^whs_[A-Za-z0-9_-]{43}$/),
      sessionId: created.sessionId,
      workspace: api.workspace,
      expiresAt: created.expiresAt,
      readOnly: false,
      eventTypes: null,
      returnUrl: null,
      branding: expect.any(Object),
    });
    const { token } = opened.session;

    const made = await api.call('POST', `${ws()}/webhooks`, { token, body: createBody() });
    expect(made.status).toBe(201);
    expect((await api.call('GET', `${ws()}/webhooks/${made.body.endpointId}`, { token })).status).toBe(200);
    const overview = await api.call('GET', `${ws()}/overview`, { token });
    expect(overview.body.caller.permissions).not.toContain('token:list');

    const client = await mcp(token);
    const listed = (await client.callTool({ name: 'list_webhooks', arguments: { slug: api.workspace } })) as {
      isError?: boolean;
      structuredContent?: any;
    };
    expect(listed.isError ?? false).toBe(false);
    expect(listed.structuredContent.items.map((e: { endpointId: string }) => e.endpointId)).toContain(made.body.endpointId);

    // The session is listed (never its code or token), opened.
    const sessions = await api.call('GET', `${ws()}/portal-sessions`);
    const row = sessions.body.items.find((s: { sessionId: string }) => s.sessionId === created.sessionId);
    expect(row).toMatchObject({ readOnly: false, eventTypes: null, returnUrl: null, openedAt: expect.any(String) });
    expect(row.createdBy).toMatchObject({ kind: 'token' });
    expect(sessions.text).not.toContain(token);
    expect(sessions.text).not.toContain(new URL(created.url).hash.slice('#portal='.length));
  });

  it('opens once: of two racing opens exactly one succeeds, and a used, a forged and an expired code get the same answer', async () => {
    const created = await createSession();
    const [a, b] = await Promise.all([open(created.url), open(created.url)]);
    expect([a.ok, b.ok].filter(Boolean)).toHaveLength(1);
    const used = a.ok ? b : a;
    expect(used.ok).toBe(false);

    const forged = await open(`${api.apiUrl}/console/#portal=${'A'.repeat(43)}`);
    const junk = await open(`${api.apiUrl}/console/#portal=not-a-code`);
    const late = await createSession();
    const expired = await open(late.url, () => new Date(Date.now() + 10 * 60_000 + 1000));
    const answers = [used, forged, junk, expired].map((r) => {
      if (r.ok) throw new Error('should have been refused');
      const { traceId: _, ...rest } = r.problem;
      return rest;
    });
    expect(answers[0]).toMatchObject({
      status: 410,
      tag: 'PortalLinkInvalid',
      title: 'This portal link is invalid, already used or expired',
    });
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    // Within its ten minutes, the late link still opens: the clock alone refused it.
    expect((await open(late.url)).ok).toBe(true);
  });

  it('a revoked session cannot be opened, and its token stops working', async () => {
    const notOpened = await createSession();
    expect((await api.call('DELETE', `${ws()}/portal-sessions/${notOpened.sessionId}`)).status).toBe(204);
    expect((await open(notOpened.url)).ok).toBe(false);

    const session = await openSession();
    expect((await api.call('GET', `${ws()}/webhooks`, { token: session.token })).status).toBe(200);
    expect((await api.call('DELETE', `${ws()}/portal-sessions/${session.sessionId}`)).status).toBe(204);
    expect((await api.call('POST', `${ws()}/webhooks`, { token: session.token, body: createBody() })).status).toBe(401);
    expect((await api.call('DELETE', `${ws()}/portal-sessions/${session.sessionId}`)).body).toMatchObject({
      status: 404,
      tag: 'PortalSessionNotFound',
    });
    const listed = await api.call('GET', `${ws()}/portal-sessions?limit=200`);
    expect(listed.body.items.map((s: { sessionId: string }) => s.sessionId)).not.toContain(session.sessionId);
  });
});

describe('POST /portal-sessions/exchange', () => {
  it('needs no token, answers no-store, opens a link once and refuses a used or forged code alike', async () => {
    const created = await createSession();
    const code = new URL(created.url).hash.slice('#portal='.length);
    const first = await api.call('POST', '/portal-sessions/exchange', { token: null, body: { code } });
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.body).toMatchObject({ sessionId: created.sessionId, workspace: api.workspace, token: expect.stringMatching(/^whs_/) });
    expect((await api.call('GET', `${ws()}/webhooks`, { token: first.body.token })).status).toBe(200);

    const again = await api.call('POST', '/portal-sessions/exchange', { token: null, body: { code } });
    const forged = await api.call('POST', '/portal-sessions/exchange', { token: null, body: { code: 'B'.repeat(43) } });
    for (const refused of [again, forged]) {
      expect(refused.status).toBe(410);
      expect(refused.headers.get('cache-control')).toBe('no-store');
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    const strip = ({ traceId: _t, instance: _i, ...rest }: Record<string, unknown>) => rest;
    expect(strip(again.body)).toEqual(strip(forged.body));
    expect(again.body).toMatchObject({ tag: 'PortalLinkInvalid', status: 410 });
    expect((await api.call('POST', '/portal-sessions/exchange', { token: null, body: {} })).status).toBe(400);
  });
});

describe("a session's permissions", () => {
  it('a read-only session reads but every write is 403', async () => {
    const { token } = await openSession({ readOnly: true });
    expect((await api.call('GET', `${ws()}/webhooks`, { token })).status).toBe(200);
    expect((await api.call('GET', `${ws()}/audit-events`, { token })).status).toBe(200);
    const refused = await api.call('POST', `${ws()}/webhooks`, { token, body: createBody() });
    expect(refused.body).toMatchObject({ status: 403, tag: 'Forbidden', requiredPermission: 'webhook:write' });
  });

  it("never reaches the platform's tokens or members, nor opens another session", async () => {
    const { token } = await openSession();
    for (const [method, path, body] of [
      ['GET', `${ws()}/api-tokens`, undefined],
      ['POST', `${ws()}/api-tokens`, { name: 'x', scopes: ['read'] }],
      ['GET', `${ws()}/members`, undefined],
      ['POST', `${ws()}/portal-sessions`, {}],
      ['GET', `${ws()}/portal-sessions`, undefined],
      ['PUT', `${ws()}/branding`, { displayName: 'x' }],
    ] as const) {
      const res = await api.call(method, path, { token, ...(body ? { body } : {}) });
      expect([method, path, res.status]).toEqual([method, path, 403]);
    }
    // Nor counts them: the overview has no number of members or tokens for it, as it has for the platform's token.
    const seen = await api.call('GET', `${ws()}/overview`, { token });
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ members: null, apiTokens: null, webhooks: { total: expect.any(Number) } });
    const platform = await api.call('GET', `${ws()}/overview`);
    expect(platform.body).toMatchObject({ members: expect.any(Number), apiTokens: expect.any(Number) });
    expect(platform.body.apiTokens).toBeGreaterThan(0);
    const client = await mcp(token);
    const mint = (await client.callTool({
      name: 'create_api_token',
      arguments: { slug: api.workspace, name: 'x', scopes: ['read'] },
    })) as { isError?: boolean; structuredContent?: any };
    expect(mint.isError).toBe(true);
    expect(mint.structuredContent).toMatchObject({ status: 403, requiredPermission: 'token:write' });
  });

  it("is within its creator's: a read-scoped creator may open a read-only session, not a writing one", async () => {
    const { token } = await issueToken(api.table, api.workspace, { name: 'portal reader', scopes: ['read', 'portal:write'] });
    expect((await api.call('POST', `${ws()}/portal-sessions`, { token, body: { readOnly: true } })).status).toBe(201);
    const refused = await api.call('POST', `${ws()}/portal-sessions`, { token, body: {} });
    expect(refused.body).toMatchObject({ status: 403, tag: 'Forbidden' });
    expect(refused.body.excessPermissions).toEqual(expect.arrayContaining(['webhook:write', 'webhook:delete']));
    // Without portal:write, no session at all.
    const plain = await issueToken(api.table, api.workspace, { name: 'writer', scopes: ['write'] });
    expect((await api.call('POST', `${ws()}/portal-sessions`, { token: plain.token, body: { readOnly: true } })).body).toMatchObject({
      status: 403,
      requiredPermission: 'portal:write',
    });
  });

  it('an eventTypes session sees and subscribes to its types only; endpoints of other types are read-only to it', async () => {
    const other = await api.call('POST', `${ws()}/webhooks`, { body: createBody(['webhook.test_event', 'webhook.disabled']) });
    expect(other.status).toBe(201);
    const { token, eventTypes } = await openSession({ eventTypes: ['webhook.test_event', 'webhook.created'] });
    expect(eventTypes).toEqual(['webhook.test_event', 'webhook.created']);

    const types = await api.call('GET', `${ws()}/event-types`, { token });
    expect(types.body.items.map((t: { name: string }) => t.name).sort()).toEqual(['webhook.created', 'webhook.test_event']);

    const refused = await api.call('POST', `${ws()}/webhooks`, { token, body: createBody(['webhook.test_event', 'webhook.disabled']) });
    expect(refused.body).toMatchObject({ status: 403, tag: 'Forbidden', eventTypes: ['webhook.disabled'] });
    expect(refused.body.detail).toContain('webhook.disabled');
    const own = await api.call('POST', `${ws()}/webhooks`, { token, body: createBody(['webhook.test_event']) });
    expect(own.status).toBe(201);
    expect((await api.call('PATCH', `${ws()}/webhooks/${own.body.endpointId}`, { token, body: { description: 'ok' } })).status).toBe(200);
    const widen = await api.call('PATCH', `${ws()}/webhooks/${own.body.endpointId}`, {
      token,
      body: { eventTypes: ['webhook.deleted'] },
    });
    expect(widen.body).toMatchObject({ status: 403, eventTypes: ['webhook.deleted'] });

    // The other endpoint: readable, but every change, send or rotation is refused.
    const id = other.body.endpointId as string;
    expect((await api.call('GET', `${ws()}/webhooks/${id}`, { token })).status).toBe(200);
    for (const [method, path, body] of [
      ['PATCH', `${ws()}/webhooks/${id}`, { description: 'no' }],
      ['POST', `${ws()}/webhooks/${id}/rotate-secret`, undefined],
      ['POST', `${ws()}/webhooks/${id}/test-event`, undefined],
      ['POST', `${ws()}/webhooks/${id}/recover`, { since: new Date(Date.now() - 3600_000).toISOString() }],
      ['DELETE', `${ws()}/webhooks/${id}`, undefined],
    ] as const) {
      const res = await api.call(method, path, { token, ...(body ? { body } : {}) });
      expect([method, path, res.status, res.body?.eventTypes]).toEqual([method, path, 403, ['webhook.disabled']]);
    }
    expect((await api.call('GET', `${ws()}/webhooks/${id}`)).body.description).toBeNull();
  });

  it('audits the changes made in a session with the session as actor, and its creation and revocation', async () => {
    const created = await createSession({ eventTypes: ['webhook.test_event'] });
    const opened = await open(created.url);
    if (!opened.ok) throw new Error('should open');
    const made = await api.call('POST', `${ws()}/webhooks`, { token: opened.session.token, body: createBody() });
    expect((await api.call('DELETE', `${ws()}/portal-sessions/${created.sessionId}`)).status).toBe(204);
    const audit = (await api.call('GET', `${ws()}/audit-events?limit=10`)).body.items as {
      action: string;
      targetId: string;
      actor: unknown;
      detail: any;
    }[];
    expect(audit.find((e) => e.action === 'webhook.created' && e.targetId === made.body.endpointId)?.actor).toEqual({
      kind: 'portal_session',
      id: created.sessionId,
    });
    const creation = audit.find((e) => e.action === 'portal_session.created' && e.targetId === created.sessionId);
    expect(creation?.actor).toMatchObject({ kind: 'token' });
    expect(creation?.detail).toEqual({ readOnly: false, eventTypes: ['webhook.test_event'], expiresAt: created.expiresAt });
    expect(JSON.stringify(creation)).not.toContain(new URL(created.url).hash.slice('#portal='.length));
    expect(audit.find((e) => e.action === 'portal_session.revoked' && e.targetId === created.sessionId)).toBeDefined();
  });
});

describe('the request body', () => {
  it('refuses a returnUrl whose origin may not frame the console, and an expiresIn out of bounds', async () => {
    for (const returnUrl of ['https://evil.example/back', 'javascript:alert(1)', 'http://hooks.example.com/x', 'not a url']) {
      const res = await api.call('POST', `${ws()}/portal-sessions`, { body: { returnUrl } });
      expect([returnUrl, res.status, res.body.tag, res.body.detail]).toEqual([
        returnUrl,
        400,
        'ReturnUrlNotAllowed',
        expect.stringMatching(/^returnUrl: /),
      ]);
    }
    // Loopback origins are allowed on the local stack.
    const local = await createSession({ returnUrl: 'http://127.0.0.1:5173/settings' });
    const opened = await open(local.url);
    expect(opened.ok && opened.session.returnUrl).toBe('http://127.0.0.1:5173/settings');
    for (const expiresIn of [299, 604_801, 1.5])
      expect((await api.call('POST', `${ws()}/portal-sessions`, { body: { expiresIn } })).status).toBe(400);
    expect((await api.call('POST', `${ws()}/portal-sessions`, { body: { eventTypes: ['no.such_type'] } })).body).toMatchObject({
      status: 400,
      tag: 'UnknownEventType',
    });
  });
});

describe('branding', () => {
  it('is validated, contrast-checked, audited, readable with webhook:read and handed over with a session', async () => {
    const light = await api.call('PUT', `${ws()}/branding`, { body: { accentColor: '#ffcc00' } });
    expect(light.body).toMatchObject({
      status: 400,
      tag: 'InvalidBranding',
      issues: [{ path: 'body.accentColor', message: expect.any(String) }],
    });
    expect(light.body.detail).toMatch(/contrast of \d\.\d\d:1 .*at least 4\.5:1/);
    expect((await api.call('PUT', `${ws()}/branding`, { body: { displayName: 'x'.repeat(65) } })).body.tag).toBe('InvalidBranding');
    expect((await api.call('PUT', `${ws()}/branding`, { body: { displayName: 'a\u0007b' } })).body.tag).toBe('InvalidBranding');
    expect((await api.call('PUT', `${ws()}/branding`, { body: { logoUrl: 'https://cdn.example/x.png' } })).status).toBe(400);

    const set = await api.call('PUT', `${ws()}/branding`, { body: { displayName: 'Acme Webhooks', accentColor: '#174A96' } });
    expect([set.status, set.body]).toEqual([200, { displayName: 'Acme Webhooks', accentColor: '#174a96' }]);
    const reader = await issueToken(api.table, api.workspace, { name: 'reader', scopes: ['read'] });
    expect((await api.call('GET', `${ws()}/branding`, { token: reader.token })).body).toEqual(set.body);
    expect((await api.call('PUT', `${ws()}/branding`, { token: reader.token, body: {} })).status).toBe(403);
    const audit = (await api.call('GET', `${ws()}/audit-events?limit=5`)).body.items;
    expect(audit.find((e: { action: string }) => e.action === 'branding.updated')?.detail).toEqual(set.body);

    const session = await openSession({ readOnly: true });
    expect(session.branding).toEqual({ displayName: 'Acme Webhooks', accentColor: '#174a96' });
    expect((await api.call('GET', `${ws()}/branding`, { token: session.token })).status).toBe(200);
    // A PUT replaces: what is left out is cleared.
    expect((await api.call('PUT', `${ws()}/branding`, { body: { displayName: 'Only a name' } })).body).toEqual({
      displayName: 'Only a name',
    });
  });
});

describe('a session whose authorizer decision is cached', () => {
  const logger = new Logger({ serviceName: 'test', logLevel: 'SILENT' });
  const context = { functionName: 'f', awsRequestId: 'r', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;
  let clock = new Date();
  const runtime = (): SurfaceRuntime => ({ deps: depsAt(() => clock), rateLimiter: memoryRateLimiter(DEFAULT_QUOTAS) });
  const handlerOf = (id: TokenOperationId) =>
    restHandler(id, IMPLEMENTATIONS[id] as OperationImpl<TokenOperationId>, { runtime: () => runtime(), logger });
  const request = (method: string, path: string, token: string, authorizer: Record<string, unknown>, body?: unknown) =>
    ({
      path,
      httpMethod: method,
      headers: { Authorization: `Bearer ${token}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
      pathParameters: { slug: api.workspace },
      queryStringParameters: null,
      body: body === undefined ? null : JSON.stringify(body),
      isBase64Encoded: false,
      requestContext: { requestId: `req-${method}`, authorizer },
    }) as unknown as APIGatewayProxyEvent;
  const cachedContext = async (token: string) => {
    const caller = await resolveCaller(api.table, `Bearer ${token}`);
    if (!caller) throw new Error('should resolve');
    return { ...allowPolicy(caller, 'arn:aws:execute-api:eu-west-1:123456789012:api/prod/GET/x').context, principalId: caller.tokenId };
  };

  it('carries kind, event types and expiry through the authorizer context', async () => {
    const session = await openSession({ eventTypes: ['webhook.test_event'], expiresIn: 300 });
    expect(await cachedContext(session.token)).toMatchObject({
      tokenId: session.sessionId,
      kind: 'portal_session',
      eventTypes: 'webhook.test_event',
      expiresAt: session.expiresAt,
    });
  });

  it('stops answering reads and writes at expiresAt, whatever the cache says', async () => {
    clock = new Date();
    const session = await openSession({ expiresIn: 300 });
    const cached = await cachedContext(session.token);
    const path = `${ws()}/webhooks`;
    expect((await handlerOf('listWebhooks')(request('GET', path, session.token, cached), context)).statusCode).toBe(200);
    clock = new Date(Date.parse(session.expiresAt) + 1);
    const read = await handlerOf('listWebhooks')(request('GET', path, session.token, cached), context);
    expect([read.statusCode, JSON.parse(read.body).tag]).toEqual([401, 'Unauthorized']);
    const write = await handlerOf('createWebhook')(request('POST', path, session.token, cached, createBody()), context);
    expect(write.statusCode).toBe(401);
    clock = new Date();
  });

  it('after a revocation, refuses the next write at once; reads keep the cache window', async () => {
    clock = new Date();
    const session = await openSession();
    const cached = await cachedContext(session.token);
    expect((await api.call('DELETE', `${ws()}/portal-sessions/${session.sessionId}`)).status).toBe(204);
    const path = `${ws()}/webhooks`;
    const write = await handlerOf('createWebhook')(request('POST', path, session.token, cached, createBody()), context);
    expect(write.statusCode).toBe(401);
    expect((await handlerOf('listWebhooks')(request('GET', path, session.token, cached), context)).statusCode).toBe(200);
    expect(await resolveCaller(api.table, `Bearer ${session.token}`)).toBeNull();
  });
});
