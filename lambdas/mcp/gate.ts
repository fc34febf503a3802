/**
 * The MCP transport gate (spec §7): POST only (405 otherwise: a GET would open
 * an event stream a buffered function URL never ends), the bearer token
 * verified with the same token store as REST (401), the `mcp` rate-limit
 * bucket (429), then a fresh stateless server per request with JSON responses.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { AppError, toProblem } from '../contract/errors';
import { resolveCaller } from '../operations/access';
import type { SurfaceRuntime } from '../operations/context';
import { createMcpServer } from './tools';

/** CORS headers MCP clients in browsers need. */
export const MCP_CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, OPTIONS',
  'access-control-allow-headers': 'authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id',
  'access-control-expose-headers': 'mcp-session-id, mcp-protocol-version, x-trace-id',
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
