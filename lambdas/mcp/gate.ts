/**
 * The MCP transport gate (docs/architecture.md#mcp-endpoint): POST only (405 otherwise: a GET would open
 * an event stream a buffered function URL never ends), a token of the minted
 * shape (401 before any database read: the URL is public, so an anonymous
 * request must cost nothing but the invocation), one JSON-RPC message per
 * request (400 for a batch), the bearer token verified with the same token
 * store as REST (401), the `mcp` rate-limit bucket (429), then a fresh
 * stateless server per request with JSON responses. Each tool call is also
 * charged to its operation's own bucket (lambdas/mcp/tools.ts).
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { MCP_CORS } from '../contract/deployment';
import { AppError, isAppError, toProblem } from '../contract/errors';
import { bearerToken, SESSION_TOKEN_PREFIX, STAFF_TOKEN_PREFIX, TOKEN_PREFIX } from '../domain/api-tokens';
import { resolveCaller } from '../operations/access';
import type { SurfaceRuntime } from '../operations/context';
import { chargeRateLimit } from '../operations/rate-limiter';
import { createMcpServer } from './tools';

/**
 * The OPTIONS answer's CORS headers but the origin, which {@link mcpCorsHeaders} adds only for an
 * allowed one (the local server answers preflights this way; the deployed URL answers them itself).
 */
export const MCP_CORS_HEADERS = {
  'access-control-allow-methods': [...MCP_CORS.allowedMethods, 'OPTIONS'].join(', '),
  'access-control-allow-headers': MCP_CORS.allowedHeaders.join(', '),
  'access-control-expose-headers': MCP_CORS.exposedHeaders.join(', '),
  'access-control-max-age': String(MCP_CORS.maxAgeSeconds),
} as const;

/**
 * The CORS headers of a preflight from `origin`: the lists of {@link MCP_CORS_HEADERS}, plus
 * `access-control-allow-origin` when `allowedOrigins` lets the origin in (`*` for `["*"]`, else the
 * origin itself). An origin not on the list gets no allow-origin header, so its browser refuses.
 */
export function mcpCorsHeaders(
  origin: string | null,
  allowedOrigins: readonly string[] = MCP_CORS.defaultAllowedOrigins,
): Record<string, string> {
  if (allowedOrigins.includes('*')) return { 'access-control-allow-origin': '*', ...MCP_CORS_HEADERS };
  if (origin !== null && allowedOrigins.includes(origin))
    return { 'access-control-allow-origin': origin, vary: 'origin', ...MCP_CORS_HEADERS };
  return { ...MCP_CORS_HEADERS };
}

/**
 * The shape of every token `mintApiToken`, `mintSessionToken` and `mintStaffToken` issue (lambdas/domain/api-tokens.ts):
 * the prefix, then 32 random bytes in unpadded base64url, 43 characters. Anything else cannot be a
 * token, so it is refused without a database read.
 */
const API_TOKEN_SHAPE = new RegExp(`^(?:${TOKEN_PREFIX}|${SESSION_TOKEN_PREFIX}|${STAFF_TOKEN_PREFIX})[A-Za-z0-9_-]{43}$`);

/** True when `token` has the shape of a minted API token, portal or staff session token (it may still be unknown, revoked or expired). */
export function isWellFormedApiToken(token: string): boolean {
  return API_TOKEN_SHAPE.test(token);
}

function problem(error: AppError, traceId: string, extra: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(toProblem(error, traceId, '/mcp')), {
    status: error.status,
    headers: {
      'content-type': 'application/problem+json',
      // A refusal is about this request only: never cached (as REST's problems).
      'cache-control': 'no-store',
      'x-trace-id': traceId,
      ...(error.retryAfterSeconds !== undefined ? { 'retry-after': String(error.retryAfterSeconds) } : {}),
      ...extra,
    },
  });
}

function unauthorized(traceId: string): Response {
  return problem(new AppError('Unauthorized', 'Send a workspace API token as `Authorization: Bearer <token>`'), traceId, {
    'www-authenticate': 'Bearer',
  });
}

/** Answers one MCP HTTP request. */
export async function handleMcpRequest(request: Request, runtime: SurfaceRuntime, traceId: string): Promise<Response> {
  if (request.method === 'OPTIONS') return new Response(null, { status: 204, headers: mcpCorsHeaders(request.headers.get('origin')) });
  if (request.method !== 'POST') {
    return problem(
      new AppError('MethodNotAllowed', 'This MCP endpoint is stateless: send JSON-RPC with POST (no GET event stream, no DELETE session)'),
      traceId,
      { allow: 'POST, OPTIONS' },
    );
  }
  const authorization = request.headers.get('authorization');
  const token = bearerToken(authorization);
  if (!token || !isWellFormedApiToken(token)) return unauthorized(traceId);
  // One message per request, so the `mcp` bucket counts every tool call: the SDK would still run a
  // JSON-RPC batch of up to 100 calls for one request (MCP 2025-06-18 removed batching).
  const body = await request.text();
  if (/^\s*\[/.test(body)) {
    return problem(
      new AppError(
        'ValidationError',
        'JSON-RPC batches are not accepted: send one JSON-RPC message per POST (MCP 2025-06-18 removed batching)',
        {
          issues: [{ path: 'body', message: 'a JSON-RPC batch (array); send one message per request' }],
        },
      ),
      traceId,
    );
  }
  const caller = await resolveCaller(runtime.deps.table, authorization, runtime.deps.now());
  if (!caller) return unauthorized(traceId);
  try {
    await chargeRateLimit(runtime.rateLimiter, 'mcp', caller.tokenId);
  } catch (error) {
    if (isAppError(error)) return problem(error, traceId);
    throw error;
  }
  const server = createMcpServer(runtime, caller, traceId);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    const response = await transport.handleRequest(new Request(request.url, { method: 'POST', headers: request.headers, body }));
    // Buffer the body before the server closes (JSON responses are small and complete).
    const answer = await response.arrayBuffer();
    const headers = new Headers(response.headers);
    headers.set('x-trace-id', traceId);
    return new Response(answer.byteLength ? answer : null, { status: response.status, headers });
  } finally {
    await server.close();
  }
}
