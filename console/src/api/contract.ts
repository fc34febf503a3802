/**
 * The console's view of the REST contract (docs/architecture.md#console). Types only: the
 * request and response shapes are inferred from the contract's own schemas, and the route
 * table below must match every operation's method and path, so a contract change that the
 * console does not follow fails `npm run typecheck`. Nothing here reaches the bundle but the
 * route table itself.
 */
import type { z } from 'zod';
import type { OPERATIONS, OperationId } from '../../../lambdas/contract/operations';
import type { Permission } from '../../../lambdas/contract/permissions';

export type { OperationId, Permission };
export type { ErrorTag } from '../../../lambdas/contract/errors';
export type {
  Attempt,
  ApiToken,
  AuditEvent,
  CreatedApiToken,
  Delivery,
  DeliveryStatus,
  Endpoint,
  Member,
  Notification,
  Overview,
  RotatedSecret,
} from '../../../lambdas/contract/schemas';
export type { EndpointHealth, HealthWindow } from '../../../lambdas/contract/health';
export type { Job, JobStatus } from '../../../lambdas/contract/jobs';

type OpDef<K extends OperationId> = Extract<(typeof OPERATIONS)[number], { operationId: K }>;
type Output<T> = T extends z.ZodType ? z.output<T> : never;
type Input<T> = T extends z.ZodType ? z.input<T> : never;

/** What operation K answers (undefined for 204). */
export type ResponseOf<K extends OperationId> = OpDef<K> extends { response: infer R } ? Output<R> : undefined;
/** What operation K answers to a dry run (`{matched}` for recover). */
export type DryRunOf<K extends OperationId> = OpDef<K> extends { dryRun: { response: infer D } } ? Output<D> : never;
/** The body operation K takes. */
export type BodyOf<K extends OperationId> = OpDef<K> extends { body: infer B } ? Input<B> : undefined;
/** The query operation K takes. */
export type QueryOf<K extends OperationId> = OpDef<K> extends { query: infer Q } ? Input<Q> : undefined;
/** The path parameters of operation K besides the workspace slug (the client fills that in). */
export type ParamsOf<K extends OperationId> = Omit<Input<OpDef<K>['params']>, 'slug'>;
/** One entry of a paged list answer. */
export type ItemOf<K extends OperationId> = ResponseOf<K> extends { items: readonly (infer I)[] } ? I : never;

/** A delivery as its own GET shows it: the summary, its `eventId` and its newest `replays`. */
export type DeliveryDetail = ResponseOf<'getWebhookDelivery'>;
/** One replay of a delivery, as its source lists it (`replays`, newest first). */
export type DeliveryReplay = DeliveryDetail['replays'][number];

/** Method and path of every operation, checked against the contract. */
export const ROUTES = {
  listWebhooks: { method: 'GET', path: '/workspaces/{slug}/webhooks' },
  createWebhook: { method: 'POST', path: '/workspaces/{slug}/webhooks' },
  getWebhook: { method: 'GET', path: '/workspaces/{slug}/webhooks/{endpointId}' },
  updateWebhook: { method: 'PATCH', path: '/workspaces/{slug}/webhooks/{endpointId}' },
  deleteWebhook: { method: 'DELETE', path: '/workspaces/{slug}/webhooks/{endpointId}' },
  rotateWebhookSecret: { method: 'POST', path: '/workspaces/{slug}/webhooks/{endpointId}/rotate-secret' },
  sendWebhookTestEvent: { method: 'POST', path: '/workspaces/{slug}/webhooks/{endpointId}/test-event' },
  listWebhookDeliveries: { method: 'GET', path: '/workspaces/{slug}/webhooks/{endpointId}/deliveries' },
  getWebhookDelivery: { method: 'GET', path: '/workspaces/{slug}/webhooks/deliveries/{deliveryId}' },
  listWebhookDeliveryAttempts: { method: 'GET', path: '/workspaces/{slug}/webhooks/deliveries/{deliveryId}/attempts' },
  replayWebhookDelivery: { method: 'POST', path: '/workspaces/{slug}/webhooks/deliveries/{deliveryId}/replay' },
  listEventTypes: { method: 'GET', path: '/workspaces/{slug}/event-types' },
  getWorkspaceOverview: { method: 'GET', path: '/workspaces/{slug}/overview' },
  listMembers: { method: 'GET', path: '/workspaces/{slug}/members' },
  listApiTokens: { method: 'GET', path: '/workspaces/{slug}/api-tokens' },
  createApiToken: { method: 'POST', path: '/workspaces/{slug}/api-tokens' },
  revokeApiToken: { method: 'DELETE', path: '/workspaces/{slug}/api-tokens/{tokenId}' },
  listAuditEvents: { method: 'GET', path: '/workspaces/{slug}/audit-events' },
  listNotifications: { method: 'GET', path: '/workspaces/{slug}/notifications' },
  listDeliveries: { method: 'GET', path: '/workspaces/{slug}/deliveries' },
  getWebhookHealth: { method: 'GET', path: '/workspaces/{slug}/webhooks/{endpointId}/health' },
  recoverWebhookDeliveries: { method: 'POST', path: '/workspaces/{slug}/webhooks/{endpointId}/recover' },
  getJob: { method: 'GET', path: '/workspaces/{slug}/jobs/{jobId}' },
  cancelJob: { method: 'POST', path: '/workspaces/{slug}/jobs/{jobId}/cancel' },
  listJobs: { method: 'GET', path: '/workspaces/{slug}/jobs' },
  ackNotification: { method: 'POST', path: '/workspaces/{slug}/notifications/{notificationId}/ack' },
  testWebhookFilter: { method: 'POST', path: '/workspaces/{slug}/webhooks/filter-test' },
  createPortalSession: { method: 'POST', path: '/workspaces/{slug}/portal-sessions' },
  listPortalSessions: { method: 'GET', path: '/workspaces/{slug}/portal-sessions' },
  revokePortalSession: { method: 'DELETE', path: '/workspaces/{slug}/portal-sessions/{sessionId}' },
  exchangePortalSession: { method: 'POST', path: '/portal-sessions/exchange' },
  getBranding: { method: 'GET', path: '/workspaces/{slug}/branding' },
  setBranding: { method: 'PUT', path: '/workspaces/{slug}/branding' },
  platformCreateWorkspace: { method: 'POST', path: '/platform/workspaces' },
  platformListWorkspaces: { method: 'GET', path: '/platform/workspaces' },
  platformGetWorkspace: { method: 'GET', path: '/platform/workspaces/{slug}' },
  platformUpdateWorkspace: { method: 'PATCH', path: '/platform/workspaces/{slug}' },
  platformDeleteWorkspace: { method: 'DELETE', path: '/platform/workspaces/{slug}' },
  platformGetJob: { method: 'GET', path: '/platform/jobs/{jobId}' },
  platformCreateApiToken: { method: 'POST', path: '/platform/workspaces/{slug}/api-tokens' },
  platformCreatePortalSession: { method: 'POST', path: '/platform/workspaces/{slug}/portal-sessions' },
  createConsoleNonce: { method: 'POST', path: '/console-sessions/nonces' },
  createConsoleSession: { method: 'POST', path: '/console-sessions' },
  listConsoleSessions: { method: 'GET', path: '/console-sessions' },
  revokeConsoleSession: { method: 'DELETE', path: '/console-sessions/{sessionId}' },
  listWorkspaces: { method: 'GET', path: '/workspaces' },
} as const satisfies { readonly [K in OperationId]: { readonly method: OpDef<K>['method']; readonly path: OpDef<K>['path'] } };
