/** Authentication, permissions, tokens and every error status, through the real local API. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKEN_OPERATIONS } from '../../lambdas/contract/operations';
import { issueToken } from '../../lambdas/operations/admin';
import { startTestApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
const ws = () => `/workspaces/${api.workspace}`;

beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

function expectProblem(res: { status: number; headers: Headers; body: any }, status: number, tag: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/problem+json');
  expect(res.body).toMatchObject({ status, tag, type: `urn:problem:webhooks:${tag}` });
  expect(typeof res.body.title).toBe('string');
  expect(typeof res.body.detail).toBe('string');
  expect(res.body.traceId).toBeTruthy();
  expect(res.headers.get('x-trace-id')).toBe(res.body.traceId);
}

describe('authentication', () => {
  it('401 without a header, with an unknown token, or with a malformed header', async () => {
    expectProblem(await api.call('GET', `${ws()}/webhooks`, { token: null }), 401, 'Unauthorized');
    expectProblem(await api.call('GET', `${ws()}/webhooks`, { token: 'whk_not-a-token' }), 401, 'Unauthorized');
    expectProblem(
      await api.call('GET', `${ws()}/webhooks`, { token: null, headers: { authorization: `Basic ${api.token}` } }),
      401,
      'Unauthorized',
    );
  });

  it('ignores cookies: a token in a cookie is still 401', async () => {
    const res = await api.call('GET', `${ws()}/webhooks`, { token: null, headers: { cookie: `token=${api.token}; session=${api.token}` } });
    expectProblem(res, 401, 'Unauthorized');
  });

  it('404 WorkspaceNotFound for a slug that is not the token’s, existing or not', async () => {
    await (await import('../../lambdas/operations/admin')).ensureWorkspace(api.table, 'other', 'Other');
    expectProblem(await api.call('GET', `/workspaces/other/webhooks`), 404, 'WorkspaceNotFound');
    expectProblem(await api.call('GET', `/workspaces/nope/overview`), 404, 'WorkspaceNotFound');
  });

  it('404 RouteNotFound for unknown routes and methods', async () => {
    expectProblem(await api.call('GET', `/nothing-here`), 404, 'RouteNotFound');
    expectProblem(await api.call('PUT', `${ws()}/webhooks`), 404, 'RouteNotFound');
  });
});

describe('permissions and tokens', () => {
  it('a read token may list but not create (403 naming the permission)', async () => {
    const { token } = await issueToken(api.table, api.workspace, { name: 'reader', scopes: ['read'] });
    expect((await api.call('GET', `${ws()}/webhooks`, { token })).status).toBe(200);
    expect((await api.call('GET', `${ws()}/audit-events`, { token })).status).toBe(200);
    const res = await api.call('POST', `${ws()}/webhooks`, {
      token,
      body: { url: 'https://hooks.example.com/r', eventTypes: ['webhook.test_event'] },
    });
    expectProblem(res, 403, 'Forbidden');
    expect(res.body.detail).toContain('webhook:write');
    expectProblem(await api.call('POST', `${ws()}/api-tokens`, { token, body: { name: 'x', scopes: ['read'] } }), 403, 'Forbidden');
  });

  it('a token with single permissions gets exactly those; the overview needs none', async () => {
    const { token, tokenId } = await issueToken(api.table, api.workspace, { name: 'narrow', scopes: ['webhook:list'] });
    expectProblem(await api.call('GET', `${ws()}/webhooks`, { token }), 403, 'Forbidden');
    const overview = await api.call('GET', `${ws()}/overview`, { token });
    expect(overview.status).toBe(200);
    // The overview tells a client (the console) what its token may do.
    expect(overview.body.caller).toEqual({ tokenId, scopes: ['webhook:list'], permissions: ['webhook:list'] });
    const admin = (await api.call('GET', `${ws()}/overview`)).body.caller;
    expect(admin.scopes).toEqual(['admin']);
    expect(admin.permissions).toEqual(expect.arrayContaining(['token:write', 'webhook:replay', 'webhook:write']));
  });

  it('creates a token shown once, refuses scopes beyond the caller, revokes it', async () => {
    const created = await api.call('POST', `${ws()}/api-tokens`, { body: { name: 'ci', scopes: ['read', 'webhook:write'] } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'ci', scopes: ['read', 'webhook:write'] });
    expect(created.body.token).toMatch(/^whk_[A-Za-z0-9_-]{43}$/);
    const ciToken = created.body.token as string;

    const list = await api.call('GET', `${ws()}/api-tokens`);
    expect(list.text).not.toContain(ciToken);
    expect(list.text).not.toMatch(/"hash"/);
    expect(list.body.items[0]).toEqual({
      tokenId: created.body.tokenId,
      name: 'ci',
      scopes: ['read', 'webhook:write'],
      createdAt: created.body.createdAt,
      // Made by the stack's seed token, which the list names.
      createdBy: { kind: 'token', id: expect.stringMatching(/^tok_/), name: expect.any(String) },
    });

    // The new token works, and cannot mint anything beyond itself.
    expect((await api.call('GET', `${ws()}/webhooks`, { token: ciToken })).status).toBe(200);
    const { token: minter } = await issueToken(api.table, api.workspace, { name: 'minter', scopes: ['token:write', 'read'] });
    const escalate = await api.call('POST', `${ws()}/api-tokens`, { token: minter, body: { name: 'x', scopes: ['admin'] } });
    expectProblem(escalate, 403, 'Forbidden');
    expect(escalate.body.excessPermissions).toEqual(expect.arrayContaining(['webhook:write', 'webhook:delete']));
    expect((await api.call('POST', `${ws()}/api-tokens`, { token: minter, body: { name: 'y', scopes: ['read'] } })).status).toBe(201);

    expect((await api.call('DELETE', `${ws()}/api-tokens/${created.body.tokenId}`)).status).toBe(204);
    expectProblem(await api.call('GET', `${ws()}/webhooks`, { token: ciToken }), 401, 'Unauthorized');
    expectProblem(await api.call('DELETE', `${ws()}/api-tokens/${created.body.tokenId}`), 404, 'TokenNotFound');
    const audit = await api.call('GET', `${ws()}/audit-events?limit=20`);
    const actions = audit.body.items.map((a: { action: string }) => a.action);
    expect(actions).toEqual(expect.arrayContaining(['api_token.created', 'api_token.revoked']));
    expect(audit.text).not.toContain(ciToken);
  });

  it('400 for unknown scopes', async () => {
    expectProblem(await api.call('POST', `${ws()}/api-tokens`, { body: { name: 'x', scopes: ['root'] } }), 400, 'ValidationError');
  });
});

describe('bad input is a clear 4xx, never a 500', () => {
  it('invalid JSON, missing body, wrong types, unknown fields', async () => {
    expectProblem(await api.call('POST', `${ws()}/webhooks`, { rawBody: '{"url":' }), 400, 'ValidationError');
    expectProblem(await api.call('POST', `${ws()}/webhooks`, { rawBody: '' }), 400, 'ValidationError');
    const types = await api.call('POST', `${ws()}/webhooks`, { body: { url: 42, eventTypes: 'x' } });
    expectProblem(types, 400, 'ValidationError');
    expect(types.body.issues.map((i: { path: string }) => i.path)).toEqual(expect.arrayContaining(['body.url', 'body.eventTypes']));
    expectProblem(
      await api.call('POST', `${ws()}/webhooks`, { body: { url: 'https://a.example.com', eventTypes: [] } }),
      400,
      'ValidationError',
    );
    expectProblem(await api.call('POST', `${ws()}/webhooks`, { body: ['array'] }), 400, 'ValidationError');
    expectProblem(await api.call('POST', `${ws()}/webhooks`, { body: null }), 400, 'ValidationError');
    expectProblem(
      await api.call('POST', `${ws()}/webhooks`, {
        body: { url: 'https://a.example.com', eventTypes: ['webhook.test_event', 'webhook.test_event'] },
      }),
      400,
      'ValidationError',
    );
  });

  it('a malformed id in the path is a 400 that says so', async () => {
    const res = await api.call('GET', `${ws()}/webhooks/not-an-id`);
    expectProblem(res, 400, 'ValidationError');
    expect(res.body.issues[0].path).toBe('path.endpointId');
  });

  it('415 for a body that is not JSON sent as another type', async () => {
    expectProblem(
      await api.call('POST', `${ws()}/webhooks`, { rawBody: 'url=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      415,
      'UnsupportedMediaType',
    );
  });

  it('413 for a body over 10 MiB', async () => {
    const res = await api.call('POST', `${ws()}/webhooks`, { rawBody: 'x'.repeat(10 * 1024 * 1024 + 10) });
    expectProblem(res, 413, 'PayloadTooLarge');
  });
});

describe('cross-workspace isolation', () => {
  it('a token of workspace A sees nothing of B through any route', async () => {
    const { ensureWorkspace } = await import('../../lambdas/operations/admin');
    await ensureWorkspace(api.table, 'bravo', 'Bravo');
    const { token: bravoToken } = await issueToken(api.table, 'bravo', { name: 'b', scopes: ['admin'] });
    const bEp = await api.call('POST', `/workspaces/bravo/webhooks`, {
      token: bravoToken,
      body: { url: 'https://bravo.example.com/h', eventTypes: ['webhook.test_event'] },
    });
    expect(bEp.status).toBe(201);
    const bTok = await api.call('POST', `/workspaces/bravo/api-tokens`, { token: bravoToken, body: { name: 'b2', scopes: ['read'] } });
    const ids: Record<string, string> = { endpointId: bEp.body.endpointId, tokenId: bTok.body.tokenId };

    // Every token route; the platform API takes no workspace token (test/http/platform-api.test.ts).
    for (const op of TOKEN_OPERATIONS) {
      // The workspace-less routes name no workspace (GET /workspaces, the staff sessions: test/http/staff-sign-in.test.ts).
      if ('workspaceless' in op && op.workspaceless) continue;
      // A's token on B's slug: 404 on every route.
      const onB = op.path.replace('{slug}', 'bravo').replace(/\{(\w+)\}/g, (_m, n: string) => ids[n] ?? 'x');
      const body =
        op.method === 'POST' || op.method === 'PATCH'
          ? { name: 'x', scopes: ['read'], url: 'https://a.example.com', eventTypes: ['webhook.test_event'] }
          : undefined;
      const res = await api.call(op.method, onB, { ...(body ? { body } : {}) });
      expect([op.operationId, res.status, res.body?.tag]).toEqual([op.operationId, 404, 'WorkspaceNotFound']);
      // A's token on A's slug with B's ids: not found, never B's data.
      if (/\{(endpointId|tokenId)\}/.test(op.path)) {
        const onA = op.path.replace('{slug}', api.workspace).replace(/\{(\w+)\}/g, (_m, n: string) => ids[n] ?? 'x');
        // A valid body where the operation needs one, so the 404 is about the id, not a 400 about the body.
        const bodyA =
          op.method === 'PATCH'
            ? { enabled: false }
            : op.operationId === 'recoverWebhookDeliveries'
              ? { since: '2026-01-01T00:00:00Z', dryRun: true }
              : undefined;
        const resA = await api.call(op.method, onA, { ...(bodyA ? { body: bodyA } : {}) });
        expect([op.operationId, resA.status]).toEqual([op.operationId, 404]);
        expect(resA.text).not.toContain('bravo.example.com');
      }
    }
    for (const list of ['webhooks', 'api-tokens', 'audit-events', 'members']) {
      const res = await api.call('GET', `${ws()}/${list}?limit=200`);
      expect(res.text).not.toContain(bEp.body.endpointId);
      expect(res.text).not.toContain(bTok.body.tokenId);
    }
    // B's endpoint is untouched.
    const still = await api.call('GET', `/workspaces/bravo/webhooks/${ids.endpointId}`, { token: bravoToken });
    expect(still.body.enabled).toBe(true);
  });
});
