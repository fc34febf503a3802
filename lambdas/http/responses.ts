/** Response builders shared by every REST handler and the local front. */
import type { APIGatewayProxyResult } from 'aws-lambda';
import { AppError, isAppError, toProblem } from '../contract/errors';

/** A JSON response (or an empty one for 204). */
export function jsonResponse(status: number, body: unknown, traceId: string): APIGatewayProxyResult {
  return {
    statusCode: status,
    headers: { 'content-type': 'application/json', 'x-trace-id': traceId, 'cache-control': 'no-store' },
    body: status === 204 || body === undefined ? '' : JSON.stringify(body),
  };
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
