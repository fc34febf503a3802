/** Error tags and their one HTTP status each (docs/behaviour.md#errors); zod-free, re-exported by `errors.ts`. */

/** Every error tag the service can answer with, and its one status. */
export const ERROR_STATUS = {
  ValidationError: 400,
  InvalidWebhookUrl: 400,
  UnknownEventType: 400,
  InvalidFilter: 400,
  InvalidHeader: 400,
  InvalidAuth: 400,
  InvalidBranding: 400,
  ReturnUrlNotAllowed: 400,
  Unauthorized: 401,
  InvalidIdToken: 401,
  Forbidden: 403,
  NoConsoleAccess: 403,
  WorkspaceNotFound: 404,
  EndpointNotFound: 404,
  DeliveryNotFound: 404,
  TokenNotFound: 404,
  JobNotFound: 404,
  NotificationNotFound: 404,
  PortalSessionNotFound: 404,
  ConsoleSessionNotFound: 404,
  StaffSignInDisabled: 404,
  RouteNotFound: 404,
  MethodNotAllowed: 405,
  PortalLinkInvalid: 410,
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
  BadGateway: 502,
  GatewayTimeout: 504,
} as const;

/** A tag of {@link ERROR_STATUS}. */
export type ErrorTag = keyof typeof ERROR_STATUS;
