/** Response builders shared by every REST handler and the local front. */
import type { APIGatewayProxyResult } from 'aws-lambda';
import { AppError, isAppError, toProblem } from '../contract/errors';
import { fitPage } from '../contract/pagination';

/** Bytes of a Lambda response as Lambda counts it: its serialized JSON. */
function lambdaResponseBytes(result: unknown): number {
  return Buffer.byteLength(JSON.stringify(result), 'utf8');
}

/**
 * The JSON response of an operation's result: a page ends early when its proxy result (the
 * body JSON-escaped inside it, as Lambda hands it to API Gateway) would pass the page budget
 * (docs/behaviour.md#pagination).
 */
export function operationResponse(status: number, result: unknown, traceId: string): APIGatewayProxyResult {
  return jsonResponse(
    status,
    fitPage(result, (r) => lambdaResponseBytes(jsonResponse(status, r, traceId))),
    traceId,
  );
}

/**
 * A JSON response, or an empty one for 204 with no content type (there is no content to type;
 * the OpenAPI document declares none).
 */
function jsonResponse(status: number, body: unknown, traceId: string): APIGatewayProxyResult {
  const headers = { 'x-trace-id': traceId, 'cache-control': 'no-store' };
  if (status === 204 || body === undefined) return { statusCode: status, headers, body: '' };
  return { statusCode: status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

/**
 * The problem+json response of any error: an {@link AppError} as itself,
 * anything else as a 500 InternalError that shows no internals.
 */
export function problemResponse(error: unknown, traceId: string, instance?: string): APIGatewayProxyResult {
  const appError = isAppError(error)
    ? error
    : new AppError('InternalError', `Something went wrong on our side. Quote trace id ${traceId} to support.`);
  return {
    statusCode: appError.status,
    headers: {
      'content-type': 'application/problem+json',
      'x-trace-id': traceId,
      'cache-control': 'no-store',
      ...(appError.retryAfterSeconds !== undefined ? { 'retry-after': String(appError.retryAfterSeconds) } : {}),
    },
    body: JSON.stringify(toProblem(appError, traceId, instance)),
  };
}
