/**
 * An endpoint's options through the real local REST API (docs/behaviour.md#custom-headers,
 * docs/behaviour.md#oauth-20-client-credentials, docs/behaviour.md#delivery-rate-per-endpoint,
 * docs/behaviour.md#payload-filters): created with each option, read by write and read scope (read
 * scope sees header names only and the token URL redacted; no one sees a secret value or the
 * client secret), the PATCH merge, each refusal with its tag and a path naming the header, the
 * rule that a secret never moves host unasked, and concurrent header changes (one is 409, none is
 * lost silently).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDACTED } from '../../lambdas/contract/limits';
import { issueToken } from '../../lambdas/operations/admin';
import { startTestApi, type ApiResponse, type TestApi } from '../helpers/local-api';

let api: TestApi;
let readToken: string;
const ws = () => `/workspaces/${api.workspace}`;

const API_KEY = 'api-key-value-7c1f0e';
const CLIENT_SECRET = 'client-secret-value-3b9d2a';
const AUTH = {
  type: 'oauth2_client_credentials',
  tokenUrl: 'https://auth.example.com/oauth2/token?tenant=acme',
  clientId: 'sender-1',
  clientSecret: CLIENT_SECRET,
  scope: 'hooks',
} as const;
const FILTER = { 'data.order.warehouse': { $in: ['ams-1', 'fra-1'] } };

beforeAll(async () => {
  api = await startTestApi({ schedules: false });
  readToken = (await issueToken(api.table, api.workspace, { name: 'reader', scopes: ['read'] })).token;
});
afterAll(async () => {
  await api?.close();
});

async function create(body: Record<string, unknown>): Promise<ApiResponse> {
  return api.call('POST', `${ws()}/webhooks`, {
    body: { url: 'https://hooks.example.com/in', eventTypes: ['webhook.test_event'], ...body },
  });
}

async function created(body: Record<string, unknown>): Promise<string> {
  const res = await create(body);
  expect(res.status).toBe(201);
  return res.body.endpointId as string;
}

const patch = (id: string, body: unknown, token?: string) => api.call('PATCH', `${ws()}/webhooks/${id}`, { body, token });
const get = (id: string, token?: string) => api.call('GET', `${ws()}/webhooks/${id}`, { token });

/** The problem of a refusal, checked to be a 400 of `tag`. */
function refused(res: ApiResponse, tag: string) {
  expect([res.status, res.headers.get('content-type'), res.body?.tag]).toEqual([400, 'application/problem+json', tag]);
  return res.body as { detail: string; issues?: { path: string; message: string }[] };
}

describe('create and read', () => {
  it('stores each option and shows a write token the plain values, never a secret one or the client secret', async () => {
    const res = await create({
      headers: { 'X-Tenant': 'acme', 'X-Api-Key': API_KEY },
      auth: AUTH,
      rateLimitPerSecond: 5,
      filter: FILTER,
    });
    expect(res.status).toBe(201);
    const expected = {
      headers: { 'X-Tenant': 'acme', 'X-Api-Key': REDACTED },
      auth: { type: 'oauth2_client_credentials', tokenUrl: AUTH.tokenUrl, clientId: 'sender-1', scope: 'hooks' },
      rateLimitPerSecond: 5,
      filter: FILTER,
    };
    expect(res.body).toMatchObject(expected);
    const id = res.body.endpointId as string;
    const read = await get(id);
    expect(read.body).toMatchObject(expected);
    const list = await api.call('GET', `${ws()}/webhooks?limit=100`);
    expect(list.body.items.find((e: { endpointId: string }) => e.endpointId === id)).toMatchObject(expected);
    for (const text of [res.text, read.text, list.text]) {
      expect(text).not.toContain(API_KEY);
      expect(text).not.toContain(CLIENT_SECRET);
      expect(text).not.toContain('clientSecret');
    }
  });

  it('shows a read token header names only and the token URL as scheme://host/…, on get and list', async () => {
    const id = await created({ headers: { 'X-Tenant': 'acme', 'X-Api-Key': API_KEY }, auth: AUTH });
    const expected = {
      url: 'https://hooks.example.com/…',
      headers: { 'X-Tenant': REDACTED, 'X-Api-Key': REDACTED },
      auth: { type: 'oauth2_client_credentials', tokenUrl: 'https://auth.example.com/…', clientId: 'sender-1', scope: 'hooks' },
    };
    const read = await get(id, readToken);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject(expected);
    const list = await api.call('GET', `${ws()}/webhooks?limit=100`, { token: readToken });
    expect(list.body.items.find((e: { endpointId: string }) => e.endpointId === id)).toMatchObject(expected);
    for (const text of [read.text, list.text]) {
      for (const hidden of ['acme', API_KEY, CLIENT_SECRET, 'tenant=acme', '/oauth2/token']) expect(text).not.toContain(hidden);
    }
  });

  it('an endpoint without options reads as none of them', async () => {
    const id = await created({ rateLimitPerSecond: null, filter: null, auth: null });
    expect((await get(id)).body).toMatchObject({ headers: {}, auth: null, rateLimitPerSecond: null, filter: null });
  });

  it('audits header names and the redacted token URL, never a value', async () => {
    const id = await created({ headers: { 'X-Tenant': 'acme-audit', 'X-Api-Key': API_KEY }, auth: AUTH, filter: FILTER });
    const audit = await api.call('GET', `${ws()}/audit-events?limit=20`);
    const entry = audit.body.items.find((a: { action: string; targetId: string }) => a.action === 'webhook.created' && a.targetId === id);
    expect(entry.detail).toMatchObject({
      headers: ['X-Tenant', 'X-Api-Key'],
      auth: { type: 'oauth2_client_credentials', tokenUrl: 'https://auth.example.com/…', clientId: 'sender-1' },
      rateLimitPerSecond: null,
      filter: true,
    });
    for (const hidden of ['acme-audit', API_KEY, CLIENT_SECRET]) expect(audit.text).not.toContain(hidden);
  });
});

describe('refusals', () => {
  it.each([
    [{ 'Content-Type': 'text/plain' }, 'Content-Type'],
    [{ 'webhook-signature': 'v1,x' }, 'webhook-signature'],
    [{ 'X-Amz-Date': '1' }, 'X-Amz-Date'],
    [{ Host: 'evil.example' }, 'Host'],
    [{ 'Proxy-Authorization': 'x' }, 'Proxy-Authorization'],
    [{ 'X-Ok': 'fine', 'X-Bad': 'a\r\nX-Injected: 1' }, 'X-Bad'],
    [{ 'X-Nul': 'a\u0000b' }, 'X-Nul'],
    [{ 'Bad Name': 'x' }, 'Bad Name'],
    [{ 'X-Number': 5 }, 'X-Number'],
    [{ 'X-Null': null }, 'X-Null'],
  ])('create refuses headers %j: 400 InvalidHeader naming %s', async (headers, name) => {
    const problem = refused(await create({ headers }), 'InvalidHeader');
    const path = `body.headers[${JSON.stringify(name)}]`;
    expect(problem.detail).toContain(path);
    expect(problem.issues).toEqual([{ path, message: expect.any(String) }]);
  });

  it('refuses headers that are not an object, more than 20, or over 8 KiB, and authorization with OAuth', async () => {
    for (const headers of [[], 'X-Tenant: a', null])
      expect(refused(await create({ headers }), 'InvalidHeader').issues).toEqual([{ path: 'body.headers', message: expect.any(String) }]);
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v']));
    expect(refused(await create({ headers: many }), 'InvalidHeader').detail).toMatch(/21 headers/);
    expect(refused(await create({ headers: { 'X-Big': 'a'.repeat(8200) } }), 'InvalidHeader').detail).toMatch(/bytes/);
    const oauth = refused(await create({ headers: { Authorization: 'Basic abc' }, auth: AUTH }), 'InvalidHeader');
    expect(oauth.issues![0]!.path).toBe('body.headers["Authorization"]');
  });

  it('refuses a token URL the receiver URL rules refuse: 400 InvalidAuth naming body.auth.tokenUrl', async () => {
    for (const tokenUrl of ['http://auth.example.com/token', 'https://10.0.0.1/token', 'https://auth.localhost/token']) {
      const problem = refused(await create({ auth: { ...AUTH, tokenUrl } }), 'InvalidAuth');
      expect(problem.detail).toMatch(/^body\.auth\.tokenUrl: /);
      expect(problem.issues).toEqual([{ path: 'body.auth.tokenUrl', message: expect.any(String) }]);
    }
  });

  it('refuses a filter with InvalidFilter and a rate out of range with ValidationError; nothing is written', async () => {
    const before = (await api.call('GET', `${ws()}/overview`)).body.webhooks.total;
    expect(refused(await create({ filter: { 'data.total': { $gt: 'ten' } } }), 'InvalidFilter').issues![0]!.path).toBe(
      'body.filter["data.total"].$gt',
    );
    refused(await create({ rateLimitPerSecond: 0 }), 'ValidationError');
    refused(await create({ rateLimitPerSecond: 1001 }), 'ValidationError');
    refused(await create({ auth: { ...AUTH, clientSecret: undefined } }), 'ValidationError');
    expect((await api.call('GET', `${ws()}/overview`)).body.webhooks.total).toBe(before);
  });
});

describe('update', () => {
  it('merges headers by name in any case, null removes one, unsent ones (secrets too) are kept', async () => {
    const id = await created({ headers: { 'X-Tenant': 'acme', 'X-Region': 'eu', 'X-Api-Key': API_KEY } });
    const res = await patch(id, { headers: { 'x-tenant': 'acme-2', 'X-Region': null, 'X-New': 'n' } });
    expect(res.status).toBe(200);
    expect(res.body.headers).toEqual({ 'x-tenant': 'acme-2', 'X-New': 'n', 'X-Api-Key': REDACTED });
    expect((await get(id)).body.headers).toEqual(res.body.headers);
    // Removing a name that is not there is no error; removing the secret leaves the others.
    const removed = await patch(id, { headers: { 'X-Api-Key': null, 'X-Absent': null } });
    expect(removed.body.headers).toEqual({ 'x-tenant': 'acme-2', 'X-New': 'n' });
    const audit = await api.call('GET', `${ws()}/audit-events?limit=5`);
    const entry = audit.body.items.find((a: { action: string; targetId: string }) => a.action === 'webhook.updated' && a.targetId === id);
    expect(entry.detail).toMatchObject({ changed: ['headers'], headersSet: [], headersRemoved: ['X-Api-Key', 'X-Absent'] });
  });

  it('sets, replaces and removes the rate, the filter and auth; an unsent option is kept', async () => {
    const id = await created({ headers: { 'X-Tenant': 'acme' } });
    const set = await patch(id, { rateLimitPerSecond: 7, filter: FILTER, auth: AUTH });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      rateLimitPerSecond: 7,
      filter: FILTER,
      auth: { clientId: 'sender-1' },
      headers: { 'X-Tenant': 'acme' },
    });
    // The client secret may be left out while the token URL stays on its origin.
    const kept = await patch(id, { auth: { ...AUTH, clientSecret: undefined, clientId: 'sender-2', scope: undefined } });
    expect(kept.status).toBe(200);
    expect(kept.body.auth).toEqual({ type: 'oauth2_client_credentials', tokenUrl: AUTH.tokenUrl, clientId: 'sender-2' });
    const cleared = await patch(id, { rateLimitPerSecond: null, filter: null, auth: null });
    expect(cleared.body).toMatchObject({ rateLimitPerSecond: null, filter: null, auth: null, headers: { 'X-Tenant': 'acme' } });
    const audit = await api.call('GET', `${ws()}/audit-events?limit=5`);
    const last = audit.body.items.find((a: { action: string; targetId: string }) => a.action === 'webhook.updated' && a.targetId === id);
    expect(last.detail).toMatchObject({
      changed: ['auth', 'rateLimitPerSecond', 'filter'],
      auth: null,
      rateLimitPerSecond: null,
      filter: false,
    });
  });

  it('refuses a bad header on PATCH naming it, and changes nothing', async () => {
    const id = await created({ headers: { 'X-Tenant': 'acme' } });
    const problem = refused(await patch(id, { headers: { 'X-Tenant': 'acme-2', 'Transfer-Encoding': 'chunked' } }), 'InvalidHeader');
    expect(problem.issues![0]!.path).toBe('body.headers["Transfer-Encoding"]');
    expect(refused(await patch(id, { headers: { 'X-Number': 1 } }), 'InvalidHeader').issues![0]!.path).toBe('body.headers["X-Number"]');
    expect((await get(id)).body.headers).toEqual({ 'X-Tenant': 'acme' });
  });

  it('turning OAuth on refuses a stored authorization header until it is removed in the same change', async () => {
    const id = await created({ headers: { Authorization: 'Basic c2VjcmV0' } });
    const problem = refused(await patch(id, { auth: AUTH }), 'InvalidHeader');
    expect(problem.issues![0]!.path).toBe('body.headers["Authorization"]');
    const ok = await patch(id, { auth: AUTH, headers: { Authorization: null } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ headers: {}, auth: { clientId: 'sender-1' } });
  });

  it('needs the client secret to turn OAuth on', async () => {
    const id = await created({});
    const problem = refused(await patch(id, { auth: { ...AUTH, clientSecret: undefined } }), 'InvalidAuth');
    expect(problem.issues![0]!.path).toBe('body.auth.clientSecret');
  });

  it('a read token may not change options', async () => {
    const id = await created({});
    const res = await patch(id, { headers: { 'X-Tenant': 'x' } }, readToken);
    expect([res.status, res.body.tag]).toEqual([403, 'Forbidden']);
  });
});

describe('a secret never moves host unasked', () => {
  it('moving the URL to another origin needs every secret header sent again or removed, naming each', async () => {
    const id = await created({ headers: { 'X-Tenant': 'acme', 'X-Api-Key': API_KEY, Cookie: 'c=1' } });
    const problem = refused(await patch(id, { url: 'https://other.example.com/in' }), 'InvalidHeader');
    expect(problem.issues!.map((i) => i.path).sort()).toEqual(['body.headers["Cookie"]', 'body.headers["X-Api-Key"]']);
    expect(problem.detail).toContain('another origin');
    // One sent again, one removed (in another case): the move is allowed.
    const moved = await patch(id, { url: 'https://other.example.com/in', headers: { 'x-api-key': 'new-key-value', cookie: null } });
    expect(moved.status).toBe(200);
    expect(moved.body.headers).toEqual({ 'X-Tenant': 'acme', 'x-api-key': REDACTED });
    // The same origin (another path) needs nothing again.
    expect((await patch(id, { url: 'https://other.example.com/v2' })).status).toBe(200);
    // A port is part of the origin.
    refused(await patch(id, { url: 'https://other.example.com:8443/v2' }), 'InvalidHeader');
  });

  it('moving the URL to another origin needs auth with its client secret, or auth removed', async () => {
    const id = await created({ auth: AUTH });
    const url = 'https://elsewhere.example.com/in';
    expect(refused(await patch(id, { url }), 'InvalidAuth').issues![0]!.path).toBe('body.auth');
    expect(refused(await patch(id, { url, auth: { ...AUTH, clientSecret: undefined } }), 'InvalidAuth').issues![0]!.path).toBe(
      'body.auth.clientSecret',
    );
    expect((await patch(id, { url, auth: AUTH })).status).toBe(200);
    const id2 = await created({ auth: AUTH });
    const removed = await patch(id2, { url, auth: null });
    expect([removed.status, removed.body.auth]).toEqual([200, null]);
  });

  it('moving the token URL to another origin needs the client secret', async () => {
    const id = await created({ auth: AUTH });
    const moved = { ...AUTH, clientSecret: undefined, tokenUrl: 'https://login.example.net/token' };
    expect(refused(await patch(id, { auth: moved }), 'InvalidAuth').detail).toMatch(/^body\.auth\.clientSecret: .*tokenUrl moves/);
    expect((await patch(id, { auth: { ...moved, clientSecret: 'another-secret-1' } })).status).toBe(200);
  });
});

describe('concurrent changes', () => {
  it('two header changes at once: one is 409 Conflict, the other is kept whole; nothing is lost silently', async () => {
    let conflicts = 0;
    for (let round = 0; round < 5; round++) {
      const id = await created({ headers: { 'X-Base': 'b' } });
      const [a, b] = await Promise.all([patch(id, { headers: { 'X-A': 'a' } }), patch(id, { headers: { 'X-B': 'b' } })]);
      const statuses = [a.status, b.status].sort();
      const headers = (await get(id)).body.headers as Record<string, string>;
      if (statuses[0] === 200 && statuses[1] === 200) {
        // Serialised (the second read after the first wrote): both are kept.
        expect(headers).toEqual({ 'X-Base': 'b', 'X-A': 'a', 'X-B': 'b' });
        continue;
      }
      expect(statuses).toEqual([200, 409]);
      conflicts++;
      const conflict = a.status === 409 ? a : b;
      expect(conflict.body).toMatchObject({ tag: 'Conflict', detail: expect.stringContaining('retry') });
      const winner = a.status === 200 ? 'X-A' : 'X-B';
      expect(Object.keys(headers).sort()).toEqual(['X-Base', winner].sort());
    }
    // Both read before either wrote in at least one round (each reads, then plans, then writes).
    expect(conflicts).toBeGreaterThan(0);
  });
});
