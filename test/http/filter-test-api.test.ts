/**
 * `POST /workspaces/{slug}/webhooks/filter-test` through the real local API
 * (docs/behaviour.md#payload-filters): the verdict and its reason, an invalid filter refused with
 * issues naming its places, the payload held to an event's limits, the read permission and bucket,
 * and the static `filter-test` segment never taken for an endpoint id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PAYLOAD_BYTES, MAX_PAYLOAD_DEPTH } from '../../lambdas/contract/limits';
import { issueToken } from '../../lambdas/operations/admin';
import { startTestApi, type ApiResponse, type TestApi } from '../helpers/local-api';

/** The quota of the read bucket per token in this file: each test issues its own tokens. */
const READS = 6;

let api: TestApi;
const path = () => `/workspaces/${api.workspace}/webhooks/filter-test`;

beforeAll(async () => {
  api = await startTestApi({
    rateLimits: JSON.stringify({ rest_read: { limit: READS, windowSeconds: 3600 }, rest_write: { limit: 1, windowSeconds: 3600 } }),
  });
});
afterAll(async () => {
  await api?.close();
});

/** A new token of the workspace with `scopes` (a fresh read quota). */
async function tokenWith(...scopes: string[]): Promise<string> {
  return (await issueToken(api.table, api.workspace, { name: `filter-${scopes.join('-')}`, scopes })).token;
}

function expectProblem(res: ApiResponse, status: number, tag: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/problem+json');
  expect(res.body).toMatchObject({ status, tag, type: `urn:problem:webhooks:${tag}` });
  expect(res.body.traceId).toBeTruthy();
}

const filter = { 'data.order.warehouse': { $in: ['ams-1'] }, 'data.order.total': { $gte: 100 } };
const order = (warehouse: string) => ({ data: { order: { id: 'o-1', warehouse, total: 250 } } });

describe('POST …/webhooks/filter-test', () => {
  it('answers whether the payload matches, and why not; a read token may call it', async () => {
    const token = await tokenWith('read');
    const yes = await api.call('POST', path(), { token, body: { filter, payload: order('ams-1') } });
    expect(yes.status, yes.text).toBe(200);
    expect(yes.body).toEqual({ matches: true });
    const no = await api.call('POST', path(), { token, body: { filter, payload: order('ber-1') } });
    expect(no.status).toBe(200);
    expect(no.body).toEqual({ matches: false, reason: 'data.order.warehouse is "ber-1", not one of ["ams-1"]' });
  });

  it('resolves paths through own properties only, __proto__ included as JSON carries it', async () => {
    const token = await tokenWith('read');
    const inherited = await api.call('POST', path(), { token, body: { filter: { 'constructor.name': 'Object' }, payload: {} } });
    expect(inherited.body).toEqual({ matches: false, reason: 'constructor.name is missing' });
    const own = await api.call('POST', path(), {
      token,
      rawBody: '{"filter": {"__proto__.x": 1}, "payload": {"__proto__": {"x": 1}}}',
    });
    expect(own.body).toEqual({ matches: true });
  });

  it('refuses an invalid filter: 400 InvalidFilter whose issues name each place in the filter', async () => {
    const token = await tokenWith('read');
    const res = await api.call('POST', path(), {
      token,
      body: { filter: { $or: [{ 'data.order.warehouse': { $in: 'ams-1' } }, { 'data.order': { id: 'o-1' } }], $regex: 'x' }, payload: {} },
    });
    expectProblem(res, 400, 'InvalidFilter');
    expect(res.body.issues).toEqual([
      {
        path: 'body.filter.$or[0]["data.order.warehouse"].$in',
        message: '$in takes a list of JSON scalars (strings, numbers, booleans, null), not a string',
      },
      {
        path: 'body.filter.$or[1]["data.order"]',
        message: 'Equality on objects is not supported: compare each field by its own path, as in "data.order.id"',
      },
      { path: 'body.filter.$regex', message: expect.stringContaining('Unknown operator $regex') as string },
    ]);
    expect(res.body.detail).toContain('body.filter.$or[0]["data.order.warehouse"].$in');
    // A body without its fields, or with another, is refused as every body is (its schema: ValidationError).
    const missing = await api.call('POST', path(), { token, body: { payload: {} } });
    expectProblem(missing, 400, 'ValidationError');
    expect(missing.body.issues).toEqual([{ path: 'body.filter', message: 'Invalid input: expected nonoptional, received undefined' }]);
    const extra = await api.call('POST', path(), { token, body: { filter: {}, payload: {}, endpointId: 'x' } });
    expectProblem(extra, 400, 'ValidationError');
    expect(extra.body.issues).toEqual([{ path: 'body', message: 'Unrecognized key: "endpointId"' }]);
    const notJson = await api.call('POST', path(), { token, rawBody: '{"filter": ' });
    expectProblem(notJson, 400, 'ValidationError');
  });

  it(`holds the payload to an event's limits: ${MAX_PAYLOAD_BYTES} bytes (413 past them) and ${MAX_PAYLOAD_DEPTH} levels (400)`, async () => {
    const token = await tokenWith('read');
    // {"s":"…"} is 8 bytes around the string.
    const sized = (bytes: number) => ({ s: 'x'.repeat(bytes - 8) });
    const atLimit = await api.call('POST', path(), { token, body: { filter: { s: { $prefix: 'x' } }, payload: sized(MAX_PAYLOAD_BYTES) } });
    expect(atLimit.status, atLimit.text).toBe(200);
    expect(atLimit.body).toEqual({ matches: true });
    const over = await api.call('POST', path(), { token, body: { filter: {}, payload: sized(MAX_PAYLOAD_BYTES + 1) } });
    expectProblem(over, 413, 'PayloadTooLarge');
    expect(over.body.detail).toBe(
      `The payload is ${MAX_PAYLOAD_BYTES + 1} bytes; at most ${MAX_PAYLOAD_BYTES} are accepted, as for an event`,
    );
    let deep: unknown = 1;
    for (let i = 0; i < MAX_PAYLOAD_DEPTH + 1; i++) deep = [deep];
    const tooDeep = await api.call('POST', path(), { token, body: { filter: {}, payload: deep } });
    expectProblem(tooDeep, 400, 'ValidationError');
    expect(tooDeep.body.issues).toEqual([
      { path: 'body.payload', message: expect.stringContaining(`${MAX_PAYLOAD_DEPTH} levels`) as string },
    ]);
  });

  it('needs webhook:read: a token without it is 403 naming the permission', async () => {
    const token = await tokenWith('webhook:list');
    const res = await api.call('POST', path(), { token, body: { filter, payload: order('ams-1') } });
    expectProblem(res, 403, 'Forbidden');
    expect(res.body.requiredPermission).toBe('webhook:read');
  });

  it('is charged to the read bucket, not the write bucket', async () => {
    const token = await tokenWith('read', 'webhook:write');
    for (let i = 0; i < READS; i++) expect((await api.call('POST', path(), { token, body: { filter: {}, payload: {} } })).status).toBe(200);
    const limited = await api.call('POST', path(), { token, body: { filter: {}, payload: {} } });
    expectProblem(limited, 429, 'RateLimited');
    expect(limited.body.detail).toMatch(/^Too many rest_read requests/);
    // The write bucket of the same token is untouched.
    const write = await api.call('POST', `/workspaces/${api.workspace}/webhooks`, {
      token,
      body: { url: 'https://hooks.example.com/filter', eventTypes: ['webhook.test_event'] },
    });
    expect(write.status, write.text).toBe(201);
  });
});

describe('the static filter-test segment beside /webhooks/{endpointId}', () => {
  it('is never taken for an endpoint id: another method on it is 404 RouteNotFound, as API Gateway answers', async () => {
    const token = await tokenWith('admin');
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const res = await api.call(method, path(), { token, ...(method === 'PATCH' ? { body: { description: 'x' } } : {}) });
      expectProblem(res, 404, 'RouteNotFound');
    }
    // A real endpoint id still reaches the endpoint routes beside it.
    const missing = await api.call('GET', `/workspaces/${api.workspace}/webhooks/whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC`, { token });
    expectProblem(missing, 404, 'EndpointNotFound');
  });
});
