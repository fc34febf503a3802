/**
 * Error tags and their HTTP statuses: the one mapping shared by REST, the
 * authorizer's gateway responses and MCP (docs/behaviour.md#errors).
 */
import { z } from 'zod';

/** Every error tag the service can answer with, and its one status. */
export const ERROR_STATUS = {
  ValidationError: 400,
  InvalidWebhookUrl: 400,
  UnknownEventType: 400,
  Unauthorized: 401,
  Forbidden: 403,
  WorkspaceNotFound: 404,
  EndpointNotFound: 404,
  DeliveryNotFound: 404,
  TokenNotFound: 404,
  JobNotFound: 404,
  RouteNotFound: 404,
  MethodNotAllowed: 405,
  EndpointDisabled: 409,
  DeliveryNotReplayable: 409,
  RecoveryInProgress: 409,
  IdempotencyKeyInProgress: 409,
  Conflict: 409,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  IdempotencyKeyReused: 422,
  RateLimited: 429,
  InternalError: 500,
} as const;

/** A tag of {@link ERROR_STATUS}. */
export type ErrorTag = keyof typeof ERROR_STATUS;

const TITLES: Record<ErrorTag, string> = {
  ValidationError: 'The request is not valid',
  InvalidWebhookUrl: 'The webhook URL is not allowed',
  UnknownEventType: 'Unknown event type',
  Unauthorized: 'Missing or unknown API token',
  Forbidden: 'The token lacks the permission this operation needs',
  WorkspaceNotFound: 'Workspace not found',
  EndpointNotFound: 'Webhook endpoint not found',
  DeliveryNotFound: 'Delivery not found',
  TokenNotFound: 'API token not found',
  JobNotFound: 'Job not found',
  RouteNotFound: 'No such route',
  MethodNotAllowed: 'Method not allowed',
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
};

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

/** RFC 9457 problem document, as every error response carries it. */
export const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    tag: z.enum(Object.keys(ERROR_STATUS) as [ErrorTag, ...ErrorTag[]]),
    traceId: z.string(),
    instance: z.string().optional(),
    issues: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .meta({ description: 'Validation issues (ValidationError only).' }),
    rule: z.string().optional().meta({ description: 'The URL rule that failed (InvalidWebhookUrl only): scheme, credentials, localhost, single_label, ip_not_public, too_long, malformed.' }),
    unknownEventTypes: z.array(z.string()).optional().meta({ description: 'The event types not in the catalogue (UnknownEventType only).' }),
    requiredPermission: z.string().optional().meta({ description: 'The permission the operation needs (Forbidden only).' }),
    excessPermissions: z.array(z.string()).optional().meta({ description: 'Requested permissions beyond the caller’s (Forbidden on token creation only).' }),
  })
  .meta({
    id: 'Problem',
    description: 'RFC 9457 problem details. `tag` names the error; `traceId` can be quoted to support.',
    example: {
      type: 'urn:problem:webhooks:WorkspaceNotFound',
      title: 'Workspace not found',
      status: 404,
      detail: 'No workspace "acme" for this token',
      tag: 'WorkspaceNotFound',
      traceId: '1-67a0c0de-4f1e2d3c4b5a69788796a5b4',
    },
  });

/** A problem document. */
export type Problem = z.infer<typeof ProblemSchema>;

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
