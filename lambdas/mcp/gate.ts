/**
 * The MCP transport gate (docs/architecture.md#mcp-endpoint): POST only (405 otherwise: a GET would open
 * an event stream a buffered function URL never ends), the bearer token
 * verified with the same token store as REST (401), the `mcp` rate-limit
 * bucket (429), then a fresh stateless server per request with JSON responses.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { AppError, toProblem } from '../contract/errors';
import { resolveCaller } from '../operations/access';
import type { SurfaceRuntime } from '../operations/context';
import { createMcpServer } from './tools';

/**
 * The CORS the MCP endpoint answers with, in one list: the deployed function
 * URL's CORS configuration is built from it (lib/constructs/mcp-endpoint.ts),
 * and the function's own OPTIONS answer (what the local server sends) too. Only
 * POST: the server is stateless and answers JSON, so there is no GET event
 * stream and no DELETE of a session. The headers are what MCP clients send: the
 * token, JSON, the negotiated protocol version, and the session and resumption
 * headers some clients send even to a stateless server.
 */
export const MCP_CORS = {
  allowedMethods: ['POST'],
  allowedHeaders: ['authorization', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'],
  exposedHeaders: ['mcp-session-id', 'mcp-protocol-version', 'x-trace-id'],
  maxAgeSeconds: 3600,
} as const;

/** The OPTIONS answer's CORS headers (any origin: the local server; the deployed URL answers preflights itself). */
export const MCP_CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': [...MCP_CORS.allowedMethods, 'OPTIONS'].join(', '),
  'access-control-allow-headers': MCP_CORS.allowedHeaders.join(', '),
  'access-control-expose-headers': MCP_CORS.exposedHeaders.join(', '),
  'access-control-max-age': String(MCP_CORS.maxAgeSeconds),
} as const;

function problem(error: AppError, traceId: string, extra: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(toProblem(error, traceId, '/mcp')), {
    status: error.status,
    headers: {
      'content-type': 'application/problem+json',
      'x-trace-id': traceId,
      ...(error.retryAfterSeconds !== undefined ? { 'retry-after': String(error.retryAfterSeconds) } : {}),
      ...extra,
    },
  });
}

/** Answers one MCP HTTP request. */
export async function handleMcpRequest(request: Request, runtime: SurfaceRuntime, traceId: string): Promise<Response> {
  if (request.method === 'OPTIONS') return new Response(null, { status: 204, headers: MCP_CORS_HEADERS });
  if (request.method !== 'POST') {
    return problem(new AppError('MethodNotAllowed', 'This MCP endpoint is stateless: send JSON-RPC with POST (no GET event stream, no DELETE session)'), traceId, { allow: 'POST, OPTIONS' });
  }
  const caller = await resolveCaller(runtime.deps.table, request.headers.get('authorization'));
  if (!caller) return problem(new AppError('Unauthorized', 'Send a workspace API token as `Authorization: Bearer <token>`'), traceId, { 'www-authenticate': 'Bearer' });
  const decision = await runtime.rateLimiter.hit('mcp', caller.tokenId);
  if (!decision.allowed) {
    return problem(new AppError('RateLimited', `Too many mcp requests for this token; retry after ${decision.retryAfterSeconds} s`, {}, decision.retryAfterSeconds), traceId);
  }
  const server = createMcpServer(runtime.deps, caller, traceId);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    const response = await transport.handleRequest(request);
    // Buffer the body before the server closes (JSON responses are small and complete).
    const body = await response.arrayBuffer();
    const headers = new Headers(response.headers);
    headers.set('x-trace-id', traceId);
    return new Response(body.byteLength ? body : null, { status: response.status, headers });
  } finally {
    await server.close();
  }
}
