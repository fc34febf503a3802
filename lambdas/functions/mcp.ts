/** Lambda entry of the MCP server, behind its own function URL (payload format 2.0). */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { defaultRuntime, logger } from '../composition/runtime';
import { handleMcpRequest } from '../mcp/gate';
import { problemResponse } from '../http/responses';

/** Function URL event → Web Request. */
function toRequest(event: APIGatewayProxyEventV2): Request {
  const host = event.requestContext.domainName ?? event.headers?.host ?? 'localhost';
  const url = `https://${host}${event.rawPath}${event.rawQueryString ? `?${event.rawQueryString}` : ''}`;
  const method = event.requestContext.http.method;
  const headers = new Headers();
  for (const [k, v] of Object.entries(event.headers ?? {})) if (v !== undefined) headers.set(k, v);
  const body =
    event.body === undefined || method === 'GET' || method === 'HEAD'
      ? undefined
      : event.isBase64Encoded
        ? Buffer.from(event.body, 'base64')
        : event.body;
  return new Request(url, { method, headers, ...(body !== undefined ? { body } : {}) });
}

/** The function URL handler. */
export async function handler(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  const traceId = event.requestContext.requestId;
  try {
    const response = await handleMcpRequest(toRequest(event), defaultRuntime(), traceId);
    const headers: Record<string, string> = {};
    response.headers.forEach((v, k) => (headers[k] = v));
    return { statusCode: response.status, headers, body: await response.text() };
  } catch (error) {
    logger.error('MCP request failed', { error: error as Error });
    return problemResponse(error, traceId, '/mcp');
  }
}
