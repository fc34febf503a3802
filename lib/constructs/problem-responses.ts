/**
 * API Gateway's own refusals (authorizer 401, throttling, unknown routes, bad
 * requests, its 5xx) in the same problem+json shape as the functions' errors
 * (docs/behaviour.md#problem-documents). Statuses, titles and types come from lambdas/contract/errors.ts.
 */
import { ResponseType, type RestApiBase } from 'aws-cdk-lib/aws-apigateway';
import { ERROR_STATUS, errorTitle, errorType, GATEWAY_DETAILS, type ErrorTag } from '#lambdas/contract/errors';

/** Content type of every error response. */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** The detail of API Gateway's own 5xx: its message can name configuration internals. */
const INTERNAL_DETAIL = 'Something went wrong on our side. Quote the traceId to support.';

/** How one gateway response type is answered. */
export interface GatewayProblem {
  /** The API Gateway response type. */
  readonly type: ResponseType;
  /** The error tag; it decides status, title and `type`. */
  readonly tag: ErrorTag;
  /**
   * The problem's `detail`. Plain text: it is pasted into a Velocity template, so it
   * may not contain `$` or `#`.
   * @default - API Gateway's own message (`$context.error.messageString`)
   */
  readonly detail?: string;
  /** Extra static response headers. @default - none */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * The gateway responses of the API (docs/behaviour.md#gateway-responses): every response type
 * API Gateway defines has its own, with the type's own status (API Gateway's documented default,
 * so a 504 stays a 504) and a problem whose tag has that status. Two types answer another status
 * than their default, each saying why on its entry. The defaults catch only what has no type: a
 * 4xx of that kind reads 400; a 5xx is what the Lambda integration answers itself (a function
 * that failed, or whose answer Lambda or API Gateway refused), 502.
 */
export const GATEWAY_PROBLEMS: readonly GatewayProblem[] = [
  // The TOKEN authorizer refused the token, or the Authorization header is missing.
  { type: ResponseType.UNAUTHORIZED, tag: 'Unauthorized', detail: 'Send a workspace API token as Authorization: Bearer <token>' },
  { type: ResponseType.ACCESS_DENIED, tag: 'Forbidden', detail: 'The token is not allowed to call this route' },
  // With no IAM authorization and no API keys, API Gateway uses this type for a
  // method or path that does not exist: that is a 404, not its default 403.
  { type: ResponseType.MISSING_AUTHENTICATION_TOKEN, tag: 'RouteNotFound', detail: 'No route matches this method and path' },
  { type: ResponseType.RESOURCE_NOT_FOUND, tag: 'RouteNotFound', detail: 'No route matches this method and path' },
  // Stage throttling refills every second; per-token quotas answer from the function with their own Retry-After.
  {
    type: ResponseType.THROTTLED,
    tag: 'RateLimited',
    detail: 'The API is receiving too many requests; retry after a second',
    headers: { 'Retry-After': '1' },
  },
  // Only with a usage plan (none today); listed so no type falls into a default.
  { type: ResponseType.QUOTA_EXCEEDED, tag: 'RateLimited' },
  // Only emitted with a request validator (none today: the operations validate, see APIG2);
  // listed so one added later answers in the same shape.
  { type: ResponseType.BAD_REQUEST_BODY, tag: 'ValidationError' },
  { type: ResponseType.BAD_REQUEST_PARAMETERS, tag: 'ValidationError' },
  { type: ResponseType.REQUEST_TOO_LARGE, tag: 'PayloadTooLarge', detail: GATEWAY_DETAILS.requestTooLarge },
  { type: ResponseType.UNSUPPORTED_MEDIA_TYPE, tag: 'UnsupportedMediaType' },
  // Only if a web ACL is attached to the stage (see the AwsSolutions-APIG3 acknowledgement).
  { type: ResponseType.WAF_FILTERED, tag: 'Forbidden', detail: 'The request was blocked by the firewall' },
  // IAM signatures and API keys are not used: listed so no type falls into a default.
  { type: ResponseType.EXPIRED_TOKEN, tag: 'Forbidden' },
  { type: ResponseType.INVALID_SIGNATURE, tag: 'Forbidden' },
  { type: ResponseType.INVALID_API_KEY, tag: 'Forbidden' },
  // 5xx never shows API Gateway's message (it can name configuration internals).
  { type: ResponseType.API_CONFIGURATION_ERROR, tag: 'InternalError', detail: INTERNAL_DETAIL },
  { type: ResponseType.AUTHORIZER_CONFIGURATION_ERROR, tag: 'InternalError', detail: INTERNAL_DETAIL },
  { type: ResponseType.AUTHORIZER_FAILURE, tag: 'InternalError', detail: INTERNAL_DETAIL },
  { type: ResponseType.INTEGRATION_TIMEOUT, tag: 'GatewayTimeout', detail: GATEWAY_DETAILS.timeout },
  // A Lambda invocation that failed (refused as too large, throttled): the same case as the
  // default 5xx below, one tag for it, so 502 rather than the type's 504 (nothing timed out).
  { type: ResponseType.INTEGRATION_FAILURE, tag: 'BadGateway', detail: GATEWAY_DETAILS.noUsableAnswer },
  { type: ResponseType.DEFAULT_4XX, tag: 'ValidationError' },
  { type: ResponseType.DEFAULT_5XX, tag: 'BadGateway', detail: GATEWAY_DETAILS.noUsableAnswer },
];

/** A JSON string literal that is also inert in a Velocity template. */
function vtlString(value: string): string {
  if (/[$#]/.test(value)) throw new Error(`Gateway response text may not contain $ or # (Velocity syntax): ${value}`);
  return JSON.stringify(value);
}

/**
 * The Velocity body template of a tag: `{type,title,status,detail,tag,traceId}`,
 * where `traceId` is the request id (the same value the functions report).
 */
function problemTemplate(tag: ErrorTag, detail?: string): string {
  return [
    '{',
    `"type":${vtlString(errorType(tag))},`,
    `"title":${vtlString(errorTitle(tag))},`,
    `"status":${ERROR_STATUS[tag]},`,
    // messageString is API Gateway's message, already quoted and escaped for JSON.
    `"detail":${detail === undefined ? '$context.error.messageString' : vtlString(detail)},`,
    `"tag":${vtlString(tag)},`,
    '"traceId":"$context.requestId"',
    '}',
  ].join('');
}

/** Adds every {@link GATEWAY_PROBLEMS} entry to an API. */
export function addProblemGatewayResponses(api: RestApiBase): void {
  for (const problem of GATEWAY_PROBLEMS) {
    const headers: Record<string, string> = { 'Content-Type': PROBLEM_CONTENT_TYPE, 'Cache-Control': 'no-store', ...problem.headers };
    api.addGatewayResponse(`Problem${pascal(problem.type.responseType)}`, {
      type: problem.type,
      statusCode: String(ERROR_STATUS[problem.tag]),
      // Header values of a gateway response are mapping expressions: static text is single-quoted.
      responseHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, `'${v}'`])),
      templates: { 'application/json': problemTemplate(problem.tag, problem.detail) },
    });
  }
}

function pascal(snake: string): string {
  return snake
    .toLowerCase()
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}
