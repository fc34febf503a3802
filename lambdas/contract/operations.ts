/**
 * Every REST operation, declared once (docs/architecture.md#one-contract). CDK routes and functions,
 * the OpenAPI document, the local server and the MCP tools are all built
 * from this list; no path, schema or status is written anywhere else.
 */
import { z } from 'zod';
import type { ErrorTag } from './errors';
import { FILTER_TEST_DESCRIPTION, FilterTestBodySchema, FilterTestResultSchema } from './filter-schemas';
import { EndpointHealthSchema, HealthQuerySchema } from './health-schemas';
import { ErasureJobSchema } from './erasure-schemas';
import {
  CreateWorkspaceBodySchema,
  PlatformCreateApiTokenBodySchema,
  UpdateWorkspaceBodySchema,
  WorkspacePageSchema,
  WorkspaceSchema,
} from './platform-schemas';
import { JobIdSchema, JobListQuerySchema, JobSchema, RecoverBodySchema, RecoveryCountSchema } from './job-schemas';
import { RECOVERY_COUNT_CAP } from './jobs';
import { DEFAULT_WORKSPACE_LIMITS, MAX_PAYLOAD_BYTES, SECRET_GRACE_HOURS, SEND_LIMITS, type WorkspaceLimits } from './limits';
import type { Permission } from './permissions';
import { WORKSPACE_COUNTED, WORKSPACE_QUOTA_BUCKET, WORKSPACE_QUOTA_NOUNS, type RateLimitBucket } from './rate-limits';
import { PageQuerySchema, pageOf } from './page-schemas';
import { PORTAL_CODE_TTL_SECONDS, PORTAL_SESSION_LIFETIME } from './portal';
import { CONSOLE_NONCE_TTL_SECONDS, STAFF_SESSION_TTL_SECONDS } from './console-oidc';
import {
  ConsoleNonceSchema,
  ConsoleSessionIdSchema,
  ConsoleSessionResultSchema,
  ConsoleSessionSchema,
  CreateConsoleSessionBodySchema,
  WorkspaceSummarySchema,
} from './staff-schemas';
import {
  BrandingSchema,
  CreatePortalSessionBodySchema,
  CreatedPortalSessionSchema,
  PortalExchangeBodySchema,
  PortalExchangeResultSchema,
  PortalSessionIdSchema,
  PortalSessionSchema,
  SetBrandingBodySchema,
} from './portal-schemas';
import { DELIVERY_REPLAYS_SHOWN } from './delivery-links';
import { DELIVERY_LOG_DESCRIPTION } from './delivery-log';
import { DeliveryLogQuerySchema } from './delivery-log-query';
import {
  ApiTokenSchema,
  AuditEventSchema,
  CreateApiTokenBodySchema,
  CreateEndpointBodySchema,
  CreatedApiTokenSchema,
  AttemptSchema,
  DeliveryDetailSchema,
  DeliveryIdSchema,
  DeliverySchema,
  EndpointIdSchema,
  EndpointSchema,
  EventTypeSchema,
  MemberSchema,
  NotificationIdSchema,
  NotificationSchema,
  OverviewSchema,
  RotatedSecretSchema,
  SlugSchema,
  TokenIdSchema,
  UpdateEndpointBodySchema,
} from './schemas';

/** HTTP methods the contract uses. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * How a route is authenticated (docs/architecture.md#route-kinds): `token`, a workspace Bearer token
 * checked by the TOKEN authorizer (an MCP tool too); `iam`, a SigV4-signed request of an allowed IAM
 * principal (API Gateway `AWS_IAM`, the platform API under `/platform`); `public`, no credential
 * (rate-limited by the client's address).
 */
export type RouteKind = 'token' | 'iam' | 'public';

/** One operation of the contract. */
export interface OperationDef {
  /** Unique id; also names the Lambda and its entry file (kebab-case). */
  readonly operationId: string;
  readonly method: HttpMethod;
  /** OpenAPI-style path with `{param}` segments. */
  readonly path: string;
  readonly summary: string;
  readonly description: string;
  readonly tag: string;
  /** How the route is authenticated. @default 'token' */
  readonly auth?: RouteKind;
  /** Path parameters (a token route's include `slug`, except the workspace-less ones: {@link OperationDef.workspaceless}). */
  readonly params: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  /** Response body schema; undefined for 204. */
  readonly response?: z.ZodType;
  readonly successStatus: 200 | 201 | 202 | 204;
  /** What the operation answers instead when its body says `dryRun: true` (nothing is changed). @default none */
  readonly dryRun?: { readonly successStatus: 200; readonly response: z.ZodType };
  /** Error tags the operation can answer with (the common ones are added by {@link declaredErrors}). */
  readonly errors: readonly ErrorTag[];
  /** Permission the token needs; null: any token of the workspace may call it. */
  readonly permission: Permission | null;
  /**
   * A token route whose path names no workspace (`GET /workspaces`, the staff session routes): the
   * slug check is skipped, the rate limit and `staffOnly` still apply. @default false
   */
  readonly workspaceless?: boolean;
  /**
   * Only a staff session may call it (docs/behaviour.md#staff-sign-in): any other token is 403
   * `Forbidden`, whatever its scopes; the operation then checks the staff role it needs. @default false
   */
  readonly staffOnly?: boolean;
  readonly rateLimit: RateLimitBucket;
  /** MCP tool name (snake_case): every token route has one; other kinds are no tool. */
  readonly mcpTool?: string;
  /** True for reads (MCP `readOnlyHint`). */
  readonly readOnly: boolean;
  /** True for deletes (MCP `destructiveHint`). */
  readonly destructive?: boolean;
  /**
   * Resources the operation uses beyond the table, so the stack grants exactly
   * these: `deliveryQueue` (sends delivery messages), `domainEvents` (puts the
   * service's own events on the bus), `jobQueue` (starts background jobs), `secretSealing` (mints
   * signing secrets, sealed with the stack's key: docs/architecture.md#secrets), `portalLinks` (mints portal links: the
   * console's address and the origins that may frame it), `consoleOidc` (verifies staff sign-ins:
   * the stage's `consoleOidc` setting, docs/behaviour.md#staff-sign-in). @default none
   */
  readonly uses?: readonly OperationResource[];
  /**
   * True for a POST that takes an `Idempotency-Key` (docs/behaviour.md#idempotency-keys): it then
   * also declares `IdempotencyKeyReused` and `IdempotencyKeyInProgress`. Only for operations whose
   * answer holds no secret, since the first answer is kept for a day. @default false
   */
  readonly idempotent?: boolean;
  /**
   * The per-workspace limit the operation meets (docs/behaviour.md#workspace-limits), on top of the
   * token's bucket: a count (`endpoints`, `apiTokens`: 409 `Conflict` on the create past it) or a
   * per-minute quota (`testSendsPerMinute`, `replaysPerMinute`: 429 `RateLimited`). Its description
   * then states the limit, and its problem example is the limit's refusal. @default none
   */
  readonly workspaceLimit?: keyof WorkspaceLimits;
}

/** Resources an operation may use beyond the table. */
export type OperationResource = 'deliveryQueue' | 'domainEvents' | 'jobQueue' | 'secretSealing' | 'portalLinks' | 'consoleOidc';

const Slug = z.object({ slug: SlugSchema });
const SlugEndpoint = z.object({ slug: SlugSchema, endpointId: EndpointIdSchema });
const SlugToken = z.object({ slug: SlugSchema, tokenId: TokenIdSchema });
const SlugDelivery = z.object({ slug: SlugSchema, deliveryId: DeliveryIdSchema });
const NoParams = z.object({});
const JobParams = z.object({ jobId: JobIdSchema });

/** The OpenAPI tag of the platform API's routes. */
const PLATFORM = 'Platform';

/** Query of the notification list: the page query and the acknowledged filter. */
const NotificationQuerySchema = PageQuerySchema.extend({
  acknowledged: z
    .enum(['true', 'false'])
    .optional()
    .meta({ description: '`true`: only acknowledged notifications; `false`: only those not acknowledged yet. Absent: all.' }),
});

/** Errors every route of a kind can answer with: an `iam` route refuses a missing, bad or not-allowed signature with 403, as API Gateway does. */
const COMMON_ERRORS: Readonly<Record<RouteKind, readonly ErrorTag[]>> = {
  token: ['Unauthorized', 'WorkspaceNotFound', 'RateLimited', 'InternalError'],
  iam: ['Forbidden', 'RateLimited', 'InternalError'],
  public: ['RateLimited', 'InternalError'],
};

/** The sentence a description gets about the operation's workspace limit, with its default. */
function workspaceLimitNote(limit: keyof WorkspaceLimits, rateLimit: RateLimitBucket): string {
  const n = DEFAULT_WORKSPACE_LIMITS[limit];
  const setting = `setting \`workspaceLimits.${limit}\``;
  const bucket = WORKSPACE_QUOTA_BUCKET[limit];
  if (bucket) {
    return `Every token of the workspace, REST and MCP alike, shares a quota of ${n} ${WORKSPACE_QUOTA_NOUNS[bucket]}s per minute by default (${setting}), on top of the token's \`${rateLimit}\` bucket: past it, 429 \`RateLimited\` with \`Retry-After\`, and nothing is written. A call refused for another reason costs no quota.`;
  }
  const counted = WORKSPACE_COUNTED[limit as keyof typeof WORKSPACE_COUNTED];
  return `A workspace may have ${n} ${counted.noun} by default (${setting}): past it, 409 \`Conflict\`, and nothing is written; ${counted.freeing} one frees a slot.`;
}

function op<const T extends OperationDef>(def: T): T {
  return def.workspaceLimit ? { ...def, description: `${def.description} ${workspaceLimitNote(def.workspaceLimit, def.rateLimit)}` } : def;
}

/** The operations, in the order the reference lists them. */
export const OPERATIONS = [
  op({
    operationId: 'listWebhooks',
    method: 'GET',
    path: '/workspaces/{slug}/webhooks',
    summary: 'List webhook endpoints',
    description: 'Pages through the workspace webhook endpoints, forward on endpoint id. Secrets are never included.',
    tag: 'Webhooks',
    params: Slug,
    query: PageQuerySchema,
    response: pageOf(EndpointSchema, 'WebhookEndpointPage'),
    successStatus: 200,
    errors: ['ValidationError'],
    permission: 'webhook:read',
    rateLimit: 'rest_read',
    mcpTool: 'list_webhooks',
    readOnly: true,
  }),
  op({
    operationId: 'createWebhook',
    method: 'POST',
    path: '/workspaces/{slug}/webhooks',
    summary: 'Create a webhook endpoint',
    description:
      'Registers an https endpoint subscribed to catalogue event types, optionally with custom `headers`, OAuth 2.0 client credentials (`auth`), a delivery rate (`rateLimitPerSecond`) and a payload `filter` (docs/behaviour.md#custom-headers and the sections after it). A signing secret is minted but not returned: rotate the secret to obtain one. Secret header values and the client secret are never returned either. Writes audit `webhook.created`.',
    tag: 'Webhooks',
    params: Slug,
    body: CreateEndpointBodySchema,
    response: EndpointSchema,
    successStatus: 201,
    errors: ['ValidationError', 'InvalidWebhookUrl', 'UnknownEventType', 'InvalidHeader', 'InvalidAuth', 'InvalidFilter', 'Conflict'],
    permission: 'webhook:write',
    rateLimit: 'rest_write',
    workspaceLimit: 'endpoints',
    mcpTool: 'create_webhook',
    readOnly: false,
    uses: ['domainEvents', 'secretSealing'],
    idempotent: true,
  }),
  op({
    operationId: 'getWebhook',
    method: 'GET',
    path: '/workspaces/{slug}/webhooks/{endpointId}',
    summary: 'Get a webhook endpoint',
    description: 'Returns one endpoint of the workspace, without its secret.',
    tag: 'Webhooks',
    params: SlugEndpoint,
    response: EndpointSchema,
    successStatus: 200,
    errors: ['ValidationError', 'EndpointNotFound'],
    permission: 'webhook:read',
    rateLimit: 'rest_read',
    mcpTool: 'get_webhook',
    readOnly: true,
  }),
  op({
    operationId: 'updateWebhook',
    method: 'PATCH',
    path: '/workspaces/{slug}/webhooks/{endpointId}',
    summary: 'Update a webhook endpoint',
    description:
      'Changes only the fields sent (url, eventTypes, description, enabled, headers, auth, rateLimitPerSecond, filter). The URL is validated again. Re-enabling resets the failure streak. `headers` merge by name; `null` removes a header, `auth`, the rate or the filter. A change that moves the URL to another origin must send the values of secret headers and the OAuth client secret again (400 `InvalidHeader` / `InvalidAuth`), so a write never sends a stored secret to a new host. Two updates of the headers at once: one is 409 `Conflict`. Writes audit `webhook.updated` (header names, never values).',
    tag: 'Webhooks',
    params: SlugEndpoint,
    body: UpdateEndpointBodySchema,
    response: EndpointSchema,
    successStatus: 200,
    errors: [
      'ValidationError',
      'InvalidWebhookUrl',
      'UnknownEventType',
      'InvalidHeader',
      'InvalidAuth',
      'InvalidFilter',
      'EndpointNotFound',
      'Conflict',
    ],
    permission: 'webhook:write',
    rateLimit: 'rest_write',
    mcpTool: 'update_webhook',
    readOnly: false,
    uses: ['domainEvents', 'secretSealing'],
  }),
  op({
    operationId: 'deleteWebhook',
    method: 'DELETE',
    path: '/workspaces/{slug}/webhooks/{endpointId}',
    summary: 'Delete a webhook endpoint',
    description:
      'Removes the endpoint and its delivery history: from the response on, none of its deliveries or attempts is shown by any route, list or log, and a background job deletes them. Writes audit `webhook.deleted`.',
    tag: 'Webhooks',
    params: SlugEndpoint,
    successStatus: 204,
    errors: ['ValidationError', 'EndpointNotFound', 'Conflict'],
    permission: 'webhook:delete',
    rateLimit: 'rest_write',
    mcpTool: 'delete_webhook',
    readOnly: false,
    uses: ['domainEvents', 'jobQueue'],
    destructive: true,
  }),
  op({
    operationId: 'rotateWebhookSecret',
    method: 'POST',
    path: '/workspaces/{slug}/webhooks/{endpointId}/rotate-secret',
    summary: 'Rotate the signing secret',
    description: `Mints a new signing secret, returned once in this response. The replaced secret stays active for a ${SECRET_GRACE_HOURS}-hour grace window (deliveries carry two signatures); rotating again inside the window drops the original. Writes audit \`webhook.secret_rotated\`.`,
    tag: 'Webhooks',
    params: SlugEndpoint,
    response: RotatedSecretSchema,
    successStatus: 200,
    errors: ['ValidationError', 'EndpointNotFound', 'Conflict'],
    permission: 'webhook:rotate-secret',
    rateLimit: 'rest_write',
    mcpTool: 'rotate_webhook_secret',
    readOnly: false,
    uses: ['domainEvents', 'secretSealing'],
  }),
  op({
    operationId: 'sendWebhookTestEvent',
    method: 'POST',
    path: '/workspaces/{slug}/webhooks/{endpointId}/test-event',
    summary: 'Send a test event',
    description:
      'Queues a synthetic `webhook.test_event` delivery to this one endpoint, signed and recorded like any other. The endpoint must be enabled (else 409).',
    tag: 'Deliveries',
    params: SlugEndpoint,
    response: DeliverySchema,
    successStatus: 202,
    errors: ['ValidationError', 'EndpointNotFound', 'EndpointDisabled'],
    permission: 'webhook:test',
    rateLimit: 'rest_write',
    workspaceLimit: 'testSendsPerMinute',
    mcpTool: 'send_webhook_test_event',
    readOnly: false,
    uses: ['deliveryQueue'],
    idempotent: true,
  }),
  op({
    operationId: 'listWebhookDeliveries',
    method: 'GET',
    path: '/workspaces/{slug}/webhooks/{endpointId}/deliveries',
    summary: 'List deliveries of an endpoint',
    description: 'Pages through the delivery summaries of an endpoint, newest first. A read-scope token may call it.',
    tag: 'Deliveries',
    params: SlugEndpoint,
    query: PageQuerySchema,
    response: pageOf(DeliverySchema, 'DeliveryPage'),
    successStatus: 200,
    errors: ['ValidationError', 'EndpointNotFound'],
    permission: 'webhook:read',
    rateLimit: 'rest_read',
    mcpTool: 'list_webhook_deliveries',
    readOnly: true,
  }),
  op({
    operationId: 'getWebhookDelivery',
    method: 'GET',
    path: '/workspaces/{slug}/webhooks/deliveries/{deliveryId}',
    summary: 'Get a delivery',
    description:
      'Returns one delivery summary of the workspace, payload included, its `eventId`, and `replays`: its newest ' +
      String(DELIVERY_REPLAYS_SHOWN) +
      " replays, newest first, each with its id, status and creation time (a replay's own resource names its source in `replayedFrom`).",
    tag: 'Deliveries',
    params: SlugDelivery,
    response: DeliveryDetailSchema,
    successStatus: 200,
    errors: ['ValidationError', 'DeliveryNotFound'],
    permission: 'webhook:read',
    rateLimit: 'rest_read',
    mcpTool: 'get_webhook_delivery',
    readOnly: true,
  }),
  op({
    operationId: 'listWebhookDeliveryAttempts',
    method: 'GET',
    path: '/workspaces/{slug}/webhooks/deliveries/{deliveryId}/attempts',
    summary: 'List attempts of a delivery',
    description: `Pages through the immutable evidence of a delivery, by ordinal: outcome, time, duration, failure reason, request headers, response status and a ${SEND_LIMITS.bodyCapBytes / 1024} KiB body prefix. Restricted to the owning workspace.`,
    tag: 'Deliveries',
    params: SlugDelivery,
    query: PageQuerySchema,
    response: pageOf(AttemptSchema, 'DeliveryAttemptPage'),
    successStatus: 200,
    errors: ['ValidationError', 'DeliveryNotFound'],
    permission: 'webhook:list',
    rateLimit: 'rest_read',
    mcpTool: 'list_webhook_delivery_attempts',
    readOnly: true,
  }),
  op({
    operationId: 'replayWebhookDelivery',
    method: 'POST',
    path: '/workspaces/{slug}/webhooks/deliveries/{deliveryId}/replay',
    summary: 'Replay a delivery',
    description:
      'Creates a NEW pending delivery (new id, attempts 0, same event type and payload, `replayedFrom` = the source) from a `failed`, `failed_permanent` or `dead_lettered` one, and queues it. The source is unchanged. 409 when the endpoint is disabled or the source is not replayable. Writes audit `webhook.delivery_replayed`.',
    tag: 'Deliveries',
    params: SlugDelivery,
    response: DeliverySchema,
    successStatus: 202,
    errors: ['ValidationError', 'DeliveryNotFound', 'EndpointNotFound', 'EndpointDisabled', 'DeliveryNotReplayable'],
    permission: 'webhook:replay',
    rateLimit: 'rest_write',
    workspaceLimit: 'replaysPerMinute',
    mcpTool: 'replay_webhook_delivery',
    readOnly: false,
    uses: ['deliveryQueue'],
    idempotent: true,
  }),
  op({
    operationId: 'listEventTypes',
    method: 'GET',
    path: '/workspaces/{slug}/event-types',
    summary: 'List event types',
    description: `The event-type catalogue: every type an endpoint can subscribe to, with its payload JSON Schema. An event's payload is at most ${MAX_PAYLOAD_BYTES} bytes of JSON: what always fits an EventBridge entry with its envelope.`,
    tag: 'Events',
    params: Slug,
    response: z.object({ items: z.array(EventTypeSchema) }).meta({ id: 'EventTypeList' }),
    successStatus: 200,
    errors: ['ValidationError'],
    permission: 'event-type:list',
    rateLimit: 'rest_read',
    mcpTool: 'list_event_types',
    readOnly: true,
  }),
  op({
    operationId: 'getWorkspaceOverview',
    method: 'GET',
    path: '/workspaces/{slug}/overview',
    summary: 'Workspace overview',
    description:
      'Counts of the workspace endpoints, members and API tokens, the last 24 h of deliveries, and what the calling token may do (`caller`).',
    tag: 'Workspace',
    params: Slug,
    response: OverviewSchema,
    successStatus: 200,
    // The overview declares exactly WorkspaceNotFound, InternalError, Unauthorized and
    // RateLimited, so any token of the workspace may read it (no 403 possible).
    errors: [],
    permission: null,
    rateLimit: 'rest_read',
    mcpTool: 'get_workspace_overview',
    readOnly: true,
  }),
  op({
    operationId: 'listMembers',
    method: 'GET',
    path: '/workspaces/{slug}/members',
    summary: 'List members',
    description: 'Pages through the workspace members, forward on member id.',
    tag: 'Workspace',
    params: Slug,
    query: PageQuerySchema,
    response: pageOf(MemberSchema, 'MemberPage'),
    successStatus: 200,
    errors: ['ValidationError'],
    permission: 'member:list',
    rateLimit: 'rest_read',
    mcpTool: 'list_members',
    readOnly: true,
  }),
  op({
    operationId: 'listApiTokens',
    method: 'GET',
    path: '/workspaces/{slug}/api-tokens',
    summary: 'List API tokens',
    description: 'Pages through the workspace API tokens, newest first. Raw tokens are never shown again.',
    tag: 'API tokens',
    params: Slug,
    query: PageQuerySchema,
    response: pageOf(ApiTokenSchema, 'ApiTokenPage'),
    successStatus: 200,
    errors: ['ValidationError'],
    permission: 'token:list',
    rateLimit: 'rest_read',
    mcpTool: 'list_api_tokens',
    readOnly: true,
  }),
  op({
    operationId: 'createApiToken',
    method: 'POST',
    path: '/workspaces/{slug}/api-tokens',
    summary: 'Create an API token',
    description:
      'Creates a workspace token with the given scopes, which must grant nothing beyond the calling token (else 403). The raw token is in this response only; the service keeps its hash. Writes audit `api_token.created`.',
    tag: 'API tokens',
    params: Slug,
    body: CreateApiTokenBodySchema,
    response: CreatedApiTokenSchema,
    successStatus: 201,
    errors: ['ValidationError', 'Conflict'],
    permission: 'token:write',
    rateLimit: 'rest_write',
    workspaceLimit: 'apiTokens',
    mcpTool: 'create_api_token',
    readOnly: false,
    uses: ['domainEvents'],
  }),
  op({
    operationId: 'revokeApiToken',
    method: 'DELETE',
    path: '/workspaces/{slug}/api-tokens/{tokenId}',
    summary: 'Revoke an API token',
    description:
      'Revokes a token of the workspace; it stops working once the authorizer cache (at most its TTL) expires. Writes audit `api_token.revoked`.',
    tag: 'API tokens',
    params: SlugToken,
    successStatus: 204,
    errors: ['ValidationError', 'TokenNotFound'],
    permission: 'token:write',
    rateLimit: 'rest_write',
    mcpTool: 'revoke_api_token',
    readOnly: false,
    uses: ['domainEvents'],
    destructive: true,
  }),
  op({
    operationId: 'listAuditEvents',
    method: 'GET',
    path: '/workspaces/{slug}/audit-events',
    summary: 'List audit events',
    description: 'Pages through the workspace audit trail, newest first on (createdAt, id).',
    tag: 'Workspace',
    params: Slug,
    query: PageQuerySchema,
    response: pageOf(AuditEventSchema, 'AuditEventPage'),
    successStatus: 200,
    errors: ['ValidationError'],
    permission: 'audit:list',
    rateLimit: 'rest_read',
    mcpTool: 'list_audit_events',
    readOnly: true,
  }),
  op({
    operationId: 'listNotifications',
    method: 'GET',
    path: '/workspaces/{slug}/notifications',
    summary: 'List notifications',
    description:
      'Pages through workspace notifications (e.g. a delivery dead-lettered), newest first on (createdAt, id). `acknowledged` keeps only the acknowledged (`true`) or the unacknowledged (`false`) ones: a filtered page reads a bounded number of notifications, so it may hold fewer than `limit` with a `nextCursor`.',
    tag: 'Workspace',
    params: Slug,
    query: NotificationQuerySchema,
    response: pageOf(NotificationSchema, 'NotificationPage'),
    successStatus: 200,
    errors: ['ValidationError'],
    permission: 'notification:list',
    rateLimit: 'rest_read',
    mcpTool: 'list_notifications',
    readOnly: true,
  }),
  op({
    operationId: 'listDeliveries',
    method: 'GET',
    path: '/workspaces/{slug}/deliveries',
    summary: 'List the workspace delivery log',
    description: `${DELIVERY_LOG_DESCRIPTION} With \`eventId\`, the page holds the deliveries of that one event (every endpoint's, and their replays), read by the event's own index key; the other filters then narrow it.`,
    tag: 'Deliveries',
    params: Slug,
    query: DeliveryLogQuerySchema,
    response: pageOf(DeliverySchema, 'DeliveryLogPage'),
    successStatus: 200,
    errors: ['ValidationError'],
    permission: 'webhook:read',
    rateLimit: 'rest_read',
    mcpTool: 'list_deliveries',
    readOnly: true,
  }),
  op({
    operationId: 'getWebhookHealth',
    method: 'GET',
    path: '/workspaces/{slug}/webhooks/{endpointId}/health',
    summary: 'Get endpoint health',
    description:
      "The endpoint's delivery health over `window` (`24h`, the default: hourly buckets; `7d`: daily buckets, UTC): HTTP attempts, delivered, failed (of which permanent) and dead-lettered counts, the success rate, p50/p95 attempt duration, attempts by response status (`protocol_upgrade` for a 101 or any upgrade, `invalid_status` for a status outside 100–599, `timeout` and `network_error` for failures without a response), and a delivered/failed series. Read from counters the dispatcher and the dead-letter consumer add to after each batch, never by scanning deliveries: a duplicate or late receive never counts twice (only recorded observations count), a held or `endpoint_disabled` delivery is no attempt, and a crash (or a failed counter write) may drop at most the counts of the batch it interrupted.",
    tag: 'Webhooks',
    params: SlugEndpoint,
    query: HealthQuerySchema,
    response: EndpointHealthSchema,
    successStatus: 200,
    errors: ['ValidationError', 'EndpointNotFound'],
    permission: 'webhook:read',
    rateLimit: 'rest_read',
    mcpTool: 'get_webhook_health',
    readOnly: true,
  }),
  op({
    operationId: 'recoverWebhookDeliveries',
    method: 'POST',
    path: '/workspaces/{slug}/webhooks/{endpointId}/recover',
    summary: 'Recover deliveries of an endpoint',
    description:
      "Replays every delivery of the endpoint created in [`since`, `until`] whose status is one of `statuses` (default `failed_permanent` and `dead_lettered`; `failed` may be added), each as a normal replay (`replayedFrom`, audit `webhook.delivery_replayed`), paced by a background job at the stage's recovery rate. Deliveries that already have a replay (interactive or by an earlier recovery) are left out unless `includeReplayed: true`, so a recovery run twice over the same window replays nothing twice; a replay that failed and has no replay of its own is a candidate like any delivery. With `dryRun: true` it answers 200 `{matched, matchedAtLeast, skippedReplayed}` (`skippedReplayed`: matches left out because they already have a replay) (exact among the first " +
      String(RECOVERY_COUNT_CAP) +
      " deliveries of the window; past them `matchedAtLeast` is true and the counts are lower bounds) and changes nothing; otherwise 202 with the job (`GET /workspaces/{slug}/jobs/{jobId}`). 409 when the endpoint is disabled, a recovery of it is already running (`RecoveryInProgress`), or the workspace already runs the stage's `recoveryJobsPerWorkspace` jobs (`Conflict`). Writes audit `webhook.recovery_started`, then `webhook.recovery_finished`.",
    tag: 'Deliveries',
    params: SlugEndpoint,
    body: RecoverBodySchema,
    response: JobSchema,
    successStatus: 202,
    dryRun: { successStatus: 200, response: RecoveryCountSchema },
    errors: ['ValidationError', 'EndpointNotFound', 'EndpointDisabled', 'RecoveryInProgress', 'Conflict'],
    permission: 'webhook:replay',
    rateLimit: 'rest_write',
    mcpTool: 'recover_webhook_deliveries',
    readOnly: false,
    uses: ['jobQueue'],
    idempotent: true,
  }),
  op({
    operationId: 'getJob',
    method: 'GET',
    path: '/workspaces/{slug}/jobs/{jobId}',
    summary: 'Get a job',
    description:
      'Returns a background job of the workspace (a recovery) with its progress: `matched`, `replayed`, `skipped`, and its status.',
    tag: 'Deliveries',
    params: z.object({ slug: SlugSchema, jobId: JobIdSchema }),
    response: JobSchema,
    successStatus: 200,
    errors: ['ValidationError', 'JobNotFound'],
    permission: 'webhook:read',
    rateLimit: 'rest_read',
    mcpTool: 'get_job',
    readOnly: true,
  }),
  op({
    operationId: 'cancelJob',
    method: 'POST',
    path: '/workspaces/{slug}/jobs/{jobId}/cancel',
    summary: 'Cancel a job',
    description:
      'Stops a running job: no replay is written after this answer (the ones already written stay and are delivered). A job that already finished is answered as it is. Writes audit `webhook.recovery_finished` (status `cancelled`).',
    tag: 'Deliveries',
    params: z.object({ slug: SlugSchema, jobId: JobIdSchema }),
    response: JobSchema,
    successStatus: 200,
    errors: ['ValidationError', 'JobNotFound'],
    permission: 'webhook:replay',
    rateLimit: 'rest_write',
    mcpTool: 'cancel_job',
    readOnly: false,
  }),
  op({
    operationId: 'listJobs',
    method: 'GET',
    path: '/workspaces/{slug}/jobs',
    summary: 'List jobs',
    description:
      "Pages through the workspace's recovery jobs, newest first, with their progress (as `GET /workspaces/{slug}/jobs/{jobId}` shows each). `status` keeps only jobs in those statuses: a filtered page reads a bounded number of jobs, so it may hold fewer than `limit` with a `nextCursor`. The service's internal jobs (removing a deleted endpoint's history) are not listed.",
    tag: 'Deliveries',
    params: Slug,
    query: JobListQuerySchema,
    response: pageOf(JobSchema, 'JobPage'),
    successStatus: 200,
    errors: ['ValidationError'],
    permission: 'webhook:read',
    rateLimit: 'rest_read',
    mcpTool: 'list_jobs',
    readOnly: true,
  }),
  op({
    operationId: 'ackNotification',
    method: 'POST',
    path: '/workspaces/{slug}/notifications/{notificationId}/ack',
    summary: 'Acknowledge a notification',
    description:
      'Marks a notification of the workspace as acknowledged and answers it with `acknowledgedAt`. Idempotent: acknowledging it again changes nothing and answers the same notification, with the first time. Writes audit `notification.acknowledged` (once).',
    tag: 'Workspace',
    params: z.object({ slug: SlugSchema, notificationId: NotificationIdSchema }),
    response: NotificationSchema,
    successStatus: 200,
    errors: ['ValidationError', 'NotificationNotFound'],
    permission: 'notification:ack',
    rateLimit: 'rest_write',
    mcpTool: 'ack_notification',
    readOnly: false,
  }),
  op({
    operationId: 'testWebhookFilter',
    method: 'POST',
    path: '/workspaces/{slug}/webhooks/filter-test',
    summary: 'Test a payload filter',
    description: FILTER_TEST_DESCRIPTION,
    tag: 'Webhooks',
    params: Slug,
    body: FilterTestBodySchema,
    response: FilterTestResultSchema,
    successStatus: 200,
    errors: ['ValidationError', 'InvalidFilter', 'PayloadTooLarge'],
    permission: 'webhook:read',
    rateLimit: 'rest_read',
    mcpTool: 'test_webhook_filter',
    readOnly: true,
  }),
  // Portal sessions and branding (docs/behaviour.md#portal-sessions).
  op({
    operationId: 'createPortalSession',
    method: 'POST',
    path: '/workspaces/{slug}/portal-sessions',
    summary: 'Create a portal session',
    description: `Mints a link that opens the console on this workspace for a customer's people, signed in: \`url\` is the console's address with a single-use code in its fragment, to open once within ${PORTAL_CODE_TTL_SECONDS / 60} minutes (\`POST /portal-sessions/exchange\` turns it into a \`whs_\` session token). The session lasts \`expiresIn\` seconds from now (${PORTAL_SESSION_LIFETIME.minSeconds} to ${PORTAL_SESSION_LIFETIME.maxSeconds}, default ${PORTAL_SESSION_LIFETIME.defaultSeconds}). Its permissions: the \`read\` bundle when \`readOnly\`, else the \`write\` bundle, never \`token:*\`, \`member:list\` or \`portal:write\`; they must be within the calling token's (else 403). \`eventTypes\` limits the types it sees and may subscribe to; endpoints subscribed to others are read-only to it. \`returnUrl\`'s origin must be one of the stage's \`consoleFrameAncestors\` (else 400). Writes audit \`portal_session.created\`.`,
    tag: 'Portal',
    params: Slug,
    body: CreatePortalSessionBodySchema,
    response: CreatedPortalSessionSchema,
    successStatus: 201,
    errors: ['ValidationError', 'UnknownEventType', 'ReturnUrlNotAllowed'],
    permission: 'portal:write',
    rateLimit: 'rest_write',
    mcpTool: 'create_portal_session',
    readOnly: false,
    uses: ['portalLinks'],
  }),
  op({
    operationId: 'listPortalSessions',
    method: 'GET',
    path: '/workspaces/{slug}/portal-sessions',
    summary: 'List portal sessions',
    description:
      'Pages through the workspace portal sessions that have not expired, newest first (a page may hold fewer than `limit` with a `nextCursor`). Never shows a code or a token.',
    tag: 'Portal',
    params: Slug,
    query: PageQuerySchema,
    response: pageOf(PortalSessionSchema, 'PortalSessionPage'),
    successStatus: 200,
    errors: ['ValidationError'],
    permission: 'portal:write',
    rateLimit: 'rest_read',
    mcpTool: 'list_portal_sessions',
    readOnly: true,
  }),
  op({
    operationId: 'revokePortalSession',
    method: 'DELETE',
    path: '/workspaces/{slug}/portal-sessions/{sessionId}',
    summary: 'Revoke a portal session',
    description:
      "Ends a portal session: its link can no longer be opened, its token's changes are refused at once, and its reads once the authorizer cache (at most its TTL) expires. Writes audit `portal_session.revoked`.",
    tag: 'Portal',
    params: z.object({ slug: SlugSchema, sessionId: PortalSessionIdSchema }),
    successStatus: 204,
    errors: ['ValidationError', 'PortalSessionNotFound'],
    permission: 'portal:write',
    rateLimit: 'rest_write',
    mcpTool: 'revoke_portal_session',
    readOnly: false,
    destructive: true,
  }),
  op({
    operationId: 'exchangePortalSession',
    method: 'POST',
    path: '/portal-sessions/exchange',
    auth: 'public',
    summary: 'Open a portal link',
    description: `Exchanges the code of a portal link (the part after \`#portal=\`) for its session: the \`whs_\` token to send as \`Authorization: Bearer <token>\` until \`expiresAt\`, the workspace, the session's limits, its \`returnUrl\` and the workspace's branding. No token needed; rate-limited by the client's address. A code opens once, within ${PORTAL_CODE_TTL_SECONDS / 60} minutes: of two opens racing with one code exactly one succeeds. A code already used, expired, revoked or never minted is 410 \`PortalLinkInvalid\`, the same answer for each.`,
    tag: 'Portal',
    params: z.object({}),
    body: PortalExchangeBodySchema,
    response: PortalExchangeResultSchema,
    successStatus: 200,
    errors: ['ValidationError', 'PortalLinkInvalid'],
    permission: null,
    rateLimit: 'rest_write',
    readOnly: false,
  }),
  // Staff sign-in and the workspaces a caller may open (docs/behaviour.md#staff-sign-in).
  op({
    operationId: 'createConsoleNonce',
    method: 'POST',
    path: '/console-sessions/nonces',
    auth: 'public',
    summary: 'Start a staff sign-in',
    description: `Issues the nonce the console puts in its authorization request to the stage's identity provider (\`consoleOidc\`): usable once, within ${CONSOLE_NONCE_TTL_SECONDS / 60} minutes, by \`POST /console-sessions\`. No token needed; rate-limited by the client's address. 404 \`StaffSignInDisabled\` on a stage without \`consoleOidc\`.`,
    tag: 'Staff',
    params: z.object({}),
    response: ConsoleNonceSchema,
    successStatus: 201,
    errors: ['StaffSignInDisabled'],
    permission: null,
    rateLimit: 'rest_write',
    readOnly: false,
    uses: ['consoleOidc'],
  }),
  op({
    operationId: 'createConsoleSession',
    method: 'POST',
    path: '/console-sessions',
    auth: 'public',
    summary: 'Sign a staff member in',
    description: `Turns an ID token from the stage's identity provider into a staff session: a \`wss_\` token to send as \`Authorization: Bearer <token>\` for ${STAFF_SESSION_TTL_SECONDS / 3600} hour, with the scope bundle of the person's role (\`read\`, \`write\` or \`admin\`, the highest their groups give) on every workspace. The token must be signed by the issuer's published keys with an asymmetric algorithm, for this console's client id, unexpired and at most 10 minutes old, with a nonce from \`POST /console-sessions/nonces\` not used before, and an email the provider verified; else 401 \`InvalidIdToken\` naming the check. A person in no group of the setting's roles is 403 \`NoConsoleAccess\`. No token needed; rate-limited by the client's address.`,
    tag: 'Staff',
    params: z.object({}),
    body: CreateConsoleSessionBodySchema,
    response: ConsoleSessionResultSchema,
    successStatus: 200,
    errors: ['ValidationError', 'InvalidIdToken', 'NoConsoleAccess', 'StaffSignInDisabled'],
    permission: null,
    rateLimit: 'rest_write',
    readOnly: false,
    uses: ['consoleOidc'],
  }),
  op({
    operationId: 'listConsoleSessions',
    method: 'GET',
    path: '/console-sessions',
    summary: 'List staff sessions',
    description:
      'Pages through the staff sessions that have not ended, newest first. Only a staff session with the `admin` role may list them: any other token or role is 403 `Forbidden`. Never shows a token.',
    tag: 'Staff',
    params: z.object({}),
    query: PageQuerySchema,
    response: pageOf(ConsoleSessionSchema, 'ConsoleSessionPage'),
    successStatus: 200,
    errors: ['ValidationError', 'Forbidden'],
    permission: null,
    workspaceless: true,
    staffOnly: true,
    rateLimit: 'rest_read',
    mcpTool: 'list_console_sessions',
    readOnly: true,
  }),
  op({
    operationId: 'revokeConsoleSession',
    method: 'DELETE',
    path: '/console-sessions/{sessionId}',
    summary: 'Sign a staff member out',
    description:
      "Ends a staff session: its changes are refused at once, and its reads once the authorizer cache (at most its TTL) expires. A staff session may end itself (the console's sign-out); ending another's needs the `admin` role. Any other token is 403 `Forbidden`.",
    tag: 'Staff',
    params: z.object({ sessionId: ConsoleSessionIdSchema }),
    successStatus: 204,
    errors: ['ValidationError', 'Forbidden', 'ConsoleSessionNotFound'],
    permission: null,
    workspaceless: true,
    staffOnly: true,
    rateLimit: 'rest_write',
    mcpTool: 'revoke_console_session',
    readOnly: false,
    destructive: true,
  }),
  op({
    operationId: 'listWorkspaces',
    method: 'GET',
    path: '/workspaces',
    summary: 'List the workspaces I may open',
    description:
      "Pages through the workspaces the caller may open, in slug order: a workspace's API token or portal session, its own; a staff session, every workspace not being erased.",
    tag: 'Workspace',
    params: z.object({}),
    query: PageQuerySchema,
    response: pageOf(WorkspaceSummarySchema, 'WorkspaceSummaryPage'),
    successStatus: 200,
    errors: ['ValidationError'],
    permission: null,
    workspaceless: true,
    rateLimit: 'rest_read',
    mcpTool: 'list_workspaces',
    readOnly: true,
  }),
  op({
    operationId: 'getBranding',
    method: 'GET',
    path: '/workspaces/{slug}/branding',
    summary: 'Get branding',
    description: "The workspace's branding in the console: its display name and accent colour (each absent when not set).",
    tag: 'Portal',
    params: Slug,
    response: BrandingSchema,
    successStatus: 200,
    errors: ['ValidationError'],
    permission: 'webhook:read',
    rateLimit: 'rest_read',
    mcpTool: 'get_branding',
    readOnly: true,
  }),
  op({
    operationId: 'setBranding',
    method: 'PUT',
    path: '/workspaces/{slug}/branding',
    summary: 'Set branding',
    description:
      "Replaces the workspace's branding (a field left out is cleared). `displayName`: at most 64 characters, not blank, no control characters or bidirectional overrides. `accentColor`: `#rrggbb` with a contrast of at least 4.5:1 (WCAG AA) against the console's background and with its buttons' white text; otherwise 400 naming the ratio found and needed. Writes audit `branding.updated`.",
    tag: 'Portal',
    params: Slug,
    body: SetBrandingBodySchema,
    response: BrandingSchema,
    successStatus: 200,
    errors: ['ValidationError', 'InvalidBranding'],
    permission: 'portal:write',
    rateLimit: 'rest_write',
    mcpTool: 'set_branding',
    readOnly: false,
  }),
  // The platform API (docs/api.md#platform-api): `iam` routes, for the platform's own backend; no MCP tool.
  op({
    operationId: 'platformCreateWorkspace',
    auth: 'iam',
    method: 'POST',
    path: '/platform/workspaces',
    summary: 'Create a workspace',
    description:
      'Creates a workspace and its owner member (role `owner`) in one transaction, audited in the workspace as `workspace.created` by the Platform API. A slug that exists, or whose workspace is being erased, is 409 `Conflict`.',
    tag: PLATFORM,
    params: NoParams,
    body: CreateWorkspaceBodySchema,
    response: WorkspaceSchema,
    successStatus: 201,
    errors: ['ValidationError', 'Conflict'],
    permission: null,
    rateLimit: 'rest_write',
    readOnly: false,
  }),
  op({
    operationId: 'platformListWorkspaces',
    auth: 'iam',
    method: 'GET',
    path: '/platform/workspaces',
    summary: 'List workspaces',
    description: 'Pages through every workspace, in slug order, those being erased included (`status: erasing`).',
    tag: PLATFORM,
    params: NoParams,
    query: PageQuerySchema,
    response: WorkspacePageSchema,
    successStatus: 200,
    errors: ['ValidationError'],
    permission: null,
    rateLimit: 'rest_read',
    readOnly: true,
  }),
  op({
    operationId: 'platformGetWorkspace',
    auth: 'iam',
    method: 'GET',
    path: '/platform/workspaces/{slug}',
    summary: 'Get a workspace',
    description: 'One workspace, with its status.',
    tag: PLATFORM,
    params: Slug,
    response: WorkspaceSchema,
    successStatus: 200,
    errors: ['ValidationError', 'WorkspaceNotFound'],
    permission: null,
    rateLimit: 'rest_read',
    readOnly: true,
  }),
  op({
    operationId: 'platformUpdateWorkspace',
    auth: 'iam',
    method: 'PATCH',
    path: '/platform/workspaces/{slug}',
    summary: 'Rename a workspace',
    description: 'Renames a workspace, audited as `workspace.renamed`. A workspace being erased is 409 `Conflict`.',
    tag: PLATFORM,
    params: Slug,
    body: UpdateWorkspaceBodySchema,
    response: WorkspaceSchema,
    successStatus: 200,
    errors: ['ValidationError', 'WorkspaceNotFound', 'Conflict'],
    permission: null,
    rateLimit: 'rest_write',
    readOnly: false,
  }),
  op({
    operationId: 'platformDeleteWorkspace',
    auth: 'iam',
    method: 'DELETE',
    path: '/platform/workspaces/{slug}',
    summary: 'Erase a workspace',
    description:
      'Starts erasing everything the workspace holds, as a paced job (202, its progress at `GET /platform/jobs/{jobId}`); while it runs the workspace reads `status: erasing` and its slug cannot be created again. A repeated DELETE answers the job already running.',
    tag: PLATFORM,
    params: Slug,
    response: ErasureJobSchema,
    successStatus: 202,
    errors: ['ValidationError', 'WorkspaceNotFound'],
    permission: null,
    rateLimit: 'rest_write',
    readOnly: false,
    destructive: true,
    uses: ['jobQueue'],
  }),
  op({
    operationId: 'platformGetJob',
    auth: 'iam',
    method: 'GET',
    path: '/platform/jobs/{jobId}',
    summary: 'Get an erasure job',
    description:
      'An erasure job: what it has deleted so far by kind and, once finished, its final report (the record is kept after the workspace is gone).',
    tag: PLATFORM,
    params: JobParams,
    response: ErasureJobSchema,
    successStatus: 200,
    errors: ['ValidationError', 'JobNotFound'],
    permission: null,
    rateLimit: 'rest_read',
    readOnly: true,
  }),
  op({
    operationId: 'platformCreatePortalSession',
    auth: 'iam',
    method: 'POST',
    path: '/platform/workspaces/{slug}/portal-sessions',
    summary: 'Create a portal session',
    description: `As \`POST /workspaces/{slug}/portal-sessions\`, for the platform's backend: a single-use link (\`url\`, its code to open once within ${PORTAL_CODE_TTL_SECONDS / 60} minutes) that opens the console on the workspace, signed in, for \`expiresIn\` seconds (${PORTAL_SESSION_LIFETIME.minSeconds} to ${PORTAL_SESSION_LIFETIME.maxSeconds}, default ${PORTAL_SESSION_LIFETIME.defaultSeconds}). Audited \`portal_session.created\` by the Platform API. A workspace being erased is 409 \`Conflict\`.`,
    tag: PLATFORM,
    params: Slug,
    body: CreatePortalSessionBodySchema,
    response: CreatedPortalSessionSchema,
    successStatus: 201,
    errors: ['ValidationError', 'WorkspaceNotFound', 'Conflict', 'UnknownEventType', 'ReturnUrlNotAllowed'],
    permission: null,
    rateLimit: 'rest_write',
    readOnly: false,
    uses: ['portalLinks'],
  }),
  op({
    operationId: 'platformCreateApiToken',
    auth: 'iam',
    method: 'POST',
    path: '/platform/workspaces/{slug}/api-tokens',
    summary: "Mint a workspace's API token",
    description:
      'Mints an API token of the workspace with any scopes, audited as `api_token.created` by the Platform API. The raw token is in this answer only; only its hash is stored.',
    tag: PLATFORM,
    params: Slug,
    body: PlatformCreateApiTokenBodySchema,
    response: CreatedApiTokenSchema,
    successStatus: 201,
    errors: ['ValidationError', 'WorkspaceNotFound', 'Conflict'],
    permission: null,
    rateLimit: 'rest_write',
    readOnly: false,
    workspaceLimit: 'apiTokens',
    uses: ['domainEvents'],
  }),
] as const satisfies readonly OperationDef[];

/** An operation id of the contract. */
export type OperationId = (typeof OPERATIONS)[number]['operationId'];

type AnyOperation = (typeof OPERATIONS)[number];

/** The id of a token route (the default kind): the operations MCP serves as tools. */
export type TokenOperationId = Exclude<AnyOperation, { auth: 'iam' | 'public' }>['operationId'];

/** The id of an `iam` route (the platform API). */
export type PlatformOperationId = Extract<AnyOperation, { auth: 'iam' }>['operationId'];

/** The id of a `public` route. */
export type PublicOperationId = Extract<AnyOperation, { auth: 'public' }>['operationId'];

/** The kind of a route, its default filled in. */
export function routeKind(def: Pick<OperationDef, 'auth'>): RouteKind {
  return def.auth ?? 'token';
}

/** The token routes, in the contract's order: the MCP tools. */
export const TOKEN_OPERATIONS: readonly OperationDef[] = (OPERATIONS as readonly OperationDef[]).filter((d) => routeKind(d) === 'token');

/** Looks an operation up by id. */
export function operationById(id: string): OperationDef | undefined {
  return OPERATIONS.find((o) => o.operationId === id);
}

/** Errors every operation taking an `Idempotency-Key` can answer with (docs/behaviour.md#idempotency-keys). */
const IDEMPOTENCY_ERRORS: readonly ErrorTag[] = ['ValidationError', 'IdempotencyKeyReused', 'IdempotencyKeyInProgress'];

/** All error tags an operation can answer with, common ones included. */
export function declaredErrors(def: OperationDef): ErrorTag[] {
  return [
    ...new Set<ErrorTag>([
      ...COMMON_ERRORS[routeKind(def)],
      ...(def.permission ? (['Forbidden'] as const) : []),
      // A body that is not JSON, sent with a type that is not JSON either (lambdas/http/rest-handler.ts).
      ...(def.body ? (['UnsupportedMediaType'] as const) : []),
      ...def.errors,
      ...(def.idempotent ? IDEMPOTENCY_ERRORS : []),
    ]),
  ];
}

/** kebab-case of an operation id: the name of its Lambda entry file. */
export function kebab(operationId: string): string {
  return operationId.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
