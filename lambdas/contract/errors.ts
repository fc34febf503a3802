/**
 * Error tags and their HTTP statuses: the one mapping shared by REST, the
 * authorizer's gateway responses and MCP (docs/behaviour.md#errors). Zod-free, so every function
 * may import it; the problem's zod schema is in `problem.ts`, re-exported here.
 */

export { ERROR_STATUS, type ErrorTag } from './error-tags';
export { ProblemSchema, type Problem } from './problem';
import { API_GATEWAY_INTEGRATION_TIMEOUT_SECONDS, API_GATEWAY_PAYLOAD_BYTES, LAMBDA_SYNC_PAYLOAD_BYTES } from './aws-limits';
import { ERROR_STATUS, type ErrorTag } from './error-tags';
import type { Problem } from './problem';

const TITLES: Record<ErrorTag, string> = {
  ValidationError: 'The request is not valid',
  InvalidWebhookUrl: 'The webhook URL is not allowed',
  UnknownEventType: 'Unknown event type',
  InvalidFilter: 'The payload filter is not valid',
  InvalidHeader: 'A custom header is not allowed',
  InvalidAuth: 'The OAuth 2.0 settings are not valid',
  InvalidBranding: 'The branding is not allowed',
  ReturnUrlNotAllowed: 'The return URL is not allowed',
  Unauthorized: 'Missing or unknown API token',
  InvalidIdToken: 'The ID token cannot sign anyone in',
  Forbidden: 'The token lacks the permission this operation needs',
  NoConsoleAccess: 'No console role for this person',
  WorkspaceNotFound: 'Workspace not found',
  EndpointNotFound: 'Webhook endpoint not found',
  DeliveryNotFound: 'Delivery not found',
  TokenNotFound: 'API token not found',
  JobNotFound: 'Job not found',
  NotificationNotFound: 'Notification not found',
  PortalSessionNotFound: 'Portal session not found',
  ConsoleSessionNotFound: 'Staff session not found',
  StaffSignInDisabled: 'Staff sign-in is not set up on this stage',
  RouteNotFound: 'No such route',
  MethodNotAllowed: 'Method not allowed',
  PortalLinkInvalid: 'This portal link is invalid, already used or expired',
  EndpointDisabled: 'The webhook endpoint is disabled',
  DeliveryNotReplayable: 'The delivery cannot be replayed',
  RecoveryInProgress: 'A recovery of this endpoint is already running',
  IdempotencyKeyInProgress: 'A request with this Idempotency-Key is still running',
  Conflict: 'Conflict',
  PayloadTooLarge: 'Payload too large',
  UnsupportedMediaType: 'Unsupported media type',
  IdempotencyKeyReused: 'The Idempotency-Key was used for another request',
  RateLimited: 'Rate limit exceeded',
  InternalError: 'Internal error',
  BadGateway: 'The operation gave no usable answer',
  GatewayTimeout: 'The operation did not answer in time',
};

/**
 * The `detail` of API Gateway's own answers that the service shapes (docs/behaviour.md#errors),
 * shared by its gateway responses (lib/constructs/problem-responses.ts) and the local front, which
 * answers as API Gateway would. Plain text: no `$` or `#` (they become Velocity templates).
 */
export const GATEWAY_DETAILS = {
  /** 413: a body over API Gateway's own limit. */
  requestTooLarge: `The request body is over the ${API_GATEWAY_PAYLOAD_BYTES} bytes API Gateway accepts; at most ${LAMBDA_SYNC_PAYLOAD_BYTES} bytes of request (the body with its envelope) reach the operation`,
  /**
   * 502: the function was not invoked, failed, or answered something API Gateway cannot use. API
   * Gateway answers a request too large for Lambda, a throttled invocation, a crash and a response
   * over Lambda's limit alike, so the detail names them all.
   */
  noUsableAnswer: `The operation gave no usable answer: a request over the ${LAMBDA_SYNC_PAYLOAD_BYTES} bytes Lambda accepts (API Gateway accepts up to ${API_GATEWAY_PAYLOAD_BYTES}) never reaches it; otherwise it was throttled, failed, or its answer was over Lambda's limit. Send a smaller body, or retry and quote the traceId to support.`,
  /** 504: API Gateway stopped waiting. */
  timeout: `The operation did not answer within API Gateway's ${API_GATEWAY_INTEGRATION_TIMEOUT_SECONDS} s; it may still complete. Retry, quoting the traceId to support if it persists.`,
} as const;

/** Human title of a tag (the problem's `title`). */
export function errorTitle(tag: ErrorTag): string {
  return TITLES[tag];
}

/** `type` URI of a tag's problem document. */
export function errorType(tag: ErrorTag): string {
  return `urn:problem:webhooks:${tag}`;
}

/**
 * A failure the service reports to its caller. One class, tagged: the tag alone
 * decides the status, so REST and MCP can never disagree.
 */
export class AppError extends Error {
  override readonly name = 'AppError';
  /** HTTP status of this error's tag. */
  readonly status: number;
  constructor(
    readonly tag: ErrorTag,
    readonly detail: string,
    /** Extra members for the problem body (e.g. zod issues); never secrets. */
    readonly extensions: Record<string, unknown> = {},
    /** Seconds a client should wait (RateLimited). */
    readonly retryAfterSeconds?: number,
  ) {
    super(`${tag}: ${detail}`);
    this.status = ERROR_STATUS[tag];
  }
}

/** True for an {@link AppError} (also across module copies). */
export function isAppError(e: unknown): e is AppError {
  return e instanceof Error && (e as { name?: string }).name === 'AppError' && 'tag' in e;
}

/** Builds the problem body of an error. */
export function toProblem(error: AppError, traceId: string, instance?: string): Problem {
  return {
    type: errorType(error.tag),
    title: errorTitle(error.tag),
    status: error.status,
    detail: error.detail,
    tag: error.tag,
    traceId,
    ...(instance ? { instance } : {}),
    ...error.extensions,
  };
}
