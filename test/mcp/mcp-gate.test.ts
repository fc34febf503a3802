/**
 * The MCP gate (lambdas/mcp/gate.ts) on a real table in DynamoDB Local, every
 * DynamoDB call counted by a middleware on the table's client: what an
 * anonymous request to the public URL costs (no database read for anything
 * that cannot be a token), a JSON-RPC batch refused before anything runs, and
 * the CORS answer of a preflight (no origin by default).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_QUOTAS } from '../../lambdas/contract/rate-limits';
import { mintApiToken, TOKEN_PREFIX } from '../../lambdas/domain/api-tokens';
import { MCP_CORS } from '../../lambdas/contract/deployment';
import { isWellFormedApiToken, handleMcpRequest, MCP_CORS_HEADERS, mcpCorsHeaders } from '../../lambdas/mcp/gate';
import { ensureWorkspace, issueToken } from '../../lambdas/operations/admin';
import type { OperationDeps, SurfaceRuntime } from '../../lambdas/operations/context';
import { tableRateLimiter } from '../../lambdas/operations/rate-limiter';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
let runtime: SurfaceRuntime;
let token: string;
const calls: string[] = [];

beforeAll(async () => {
  table = await freshTable();
  await ensureWorkspace(table, 'acme', 'Acme');
  ({ token } = await issueToken(table, 'acme', { name: 'gate', scopes: ['admin'] }));
  table.doc.middlewareStack.add(
    (next, context) => async (args) => {
      calls.push(String(context.commandName));
      return next(args);
    },
    { step: 'initialize', name: 'countCalls' },
  );
  // Only the table and the limiter are reached before a tool runs; the tools' other adapters are never touched here.
  runtime = { deps: { table, now: () => new Date() } as unknown as OperationDeps, rateLimiter: tableRateLimiter(table, DEFAULT_QUOTAS) };
});
afterAll(async () => table?.drop());
beforeEach(() => {
  calls.length = 0;
});

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
const listTools = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list' });

function post(body: unknown, authorization?: string): Request {
  return new Request('https://mcp.example/', {
    method: 'POST',
    headers: { ...HEADERS, ...(authorization ? { authorization } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('the token shape', () => {
  it('is the shape of every minted token: whk_ and 43 base64url characters', () => {
    for (let i = 0; i < 50; i++) expect(isWellFormedApiToken(mintApiToken())).toBe(true);
    expect(TOKEN_PREFIX).toBe('whk_');
  });

  const malformed = [
    'whk_nope',
    `whk_${'a'.repeat(42)}`,
    `whk_${'a'.repeat(44)}`,
    `whk_${'a'.repeat(42)}=`,
    `whk_${'a'.repeat(42)}+`,
    `whk_${'a'.repeat(42)}/`,
    `wht_${'a'.repeat(43)}`,
    `WHK_${'a'.repeat(43)}`,
    'a'.repeat(47),
    'x'.repeat(10_000),
  ];

  const label = (t: string) => (t.length > 60 ? `${t.slice(0, 12)}… (${t.length} characters)` : t);
  it.each(malformed.map((t) => [label(t), t]))('refuses %s with 401 and no DynamoDB call', async (_label, bad) => {
    const res = await handleMcpRequest(post(listTools(1), `Bearer ${bad}`), runtime, 'trace-1');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(await res.json()).toMatchObject({ status: 401, tag: 'Unauthorized', traceId: 'trace-1' });
    expect(calls).toEqual([]);
  });

  it('refuses a missing or non-bearer Authorization with no DynamoDB call', async () => {
    for (const authorization of [undefined, 'Basic dXNlcjpwYXNz', `Token ${token}`]) {
      expect((await handleMcpRequest(post(listTools(1), authorization), runtime, 't')).status).toBe(401);
    }
    expect(calls).toEqual([]);
  });

  it('looks up a well-formed token (one read), and refuses it when unknown', async () => {
    const res = await handleMcpRequest(post(listTools(1), `Bearer ${mintApiToken()}`), runtime, 't');
    expect(res.status).toBe(401);
    // The control: the counter sees the lookup a token of the right shape costs.
    expect(calls.length).toBeGreaterThanOrEqual(1);
    expect(calls.every((c) => !c.startsWith('Update'))).toBe(true);
  });

  it('serves a known token: the lookup and one hit in the mcp bucket', async () => {
    const res = await handleMcpRequest(post(listTools(7), `Bearer ${token}`), runtime, 't');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: 7, result: { tools: expect.any(Array) } });
    expect(calls.filter((c) => c.startsWith('Update'))).toHaveLength(1);
  });
});

describe('JSON-RPC batches', () => {
  it('refuses a batch with 400 before any read: nothing runs, nothing is counted', async () => {
    const batch = Array.from({ length: 100 }, (_, i) => ({
      jsonrpc: '2.0',
      id: i + 1,
      method: 'tools/call',
      params: { name: 'list_event_types', arguments: { slug: 'acme' } },
    }));
    for (const body of [JSON.stringify(batch), `  \n${JSON.stringify(batch.slice(0, 2))}`, '[]']) {
      const res = await handleMcpRequest(post(body, `Bearer ${token}`), runtime, 'trace-b');
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      const problem = (await res.json()) as { tag: string; detail: string; issues: unknown[] };
      expect(problem).toMatchObject({ status: 400, tag: 'ValidationError', traceId: 'trace-b', issues: [{ path: 'body' }] });
      expect(problem.detail).toMatch(/batch/i);
    }
    expect(calls).toEqual([]);
  });

  it('still answers one message per request', async () => {
    const res = await handleMcpRequest(post(listTools(3), `Bearer ${token}`), runtime, 't');
    expect(res.status).toBe(200);
  });
});

describe('CORS', () => {
  it('allows no origin by default: a preflight gets no allow-origin header, so the browser refuses', async () => {
    expect(MCP_CORS.defaultAllowedOrigins).toEqual([]);
    const res = await handleMcpRequest(
      new Request('https://mcp.example/', {
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      }),
      runtime,
      't',
    );
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(Object.fromEntries(res.headers)).toMatchObject(MCP_CORS_HEADERS);
    expect(calls).toEqual([]);
  });

  it('allows any origin for ["*"], and a listed origin by name', () => {
    expect(mcpCorsHeaders('https://a.example', ['*'])).toMatchObject({ 'access-control-allow-origin': '*' });
    expect(mcpCorsHeaders('https://a.example', ['https://a.example'])).toMatchObject({
      'access-control-allow-origin': 'https://a.example',
      vary: 'origin',
    });
    expect(mcpCorsHeaders('https://b.example', ['https://a.example'])).not.toHaveProperty('access-control-allow-origin');
    expect(mcpCorsHeaders(null, ['https://a.example'])).not.toHaveProperty('access-control-allow-origin');
  });
});
