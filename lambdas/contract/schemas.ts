/**
 * Wire shapes of the resources (docs/architecture.md#one-contract). Timestamps are ISO 8601 UTC.
 */
import { z } from 'zod';
import { DELIVERY_REPLAYS_SHOWN } from './delivery-links';
import { DELIVERY_STATUSES, INVALID_STATUS, AUTH_FAILED, PROTOCOL_UPGRADE } from './delivery-statuses';
import { EVENT_TYPE_MAX_CHARS } from './events';
import { idPattern, type IdPrefix } from './ids';
import { distinctItems } from './input-rules';
import { PayloadFilterSchema } from './filter-schemas';
import { CUSTOM_HEADER_LIMITS, RATE_LIMIT_PER_SECOND_BOUNDS, REDACTED, SECRET_GRACE_HOURS, USER_AGENT } from './limits';
import { MEMBER_ROLES, PERMISSIONS, SCOPES } from './permissions';

const timestamp = z.string().meta({ example: '2026-11-25T12:00:00.000Z', format: 'date-time' });

/** Example values shared by the resource examples below (documentation only). */
const EXAMPLE = {
  endpointId: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC',
  deliveryId: 'whd_01JD2Y9P0R6S8T1V3W5X7Y9ZAB',
  tokenId: 'tok_01JD2YA1B2C3D4E5F6G7H8J9KM',
  url: 'https://hooks.example.com/webhooks',
  created: '2026-11-25T12:00:00.000Z',
  updated: '2026-11-25T12:05:00.000Z',
} as const;

/** A workspace slug: lower-case letters, digits and dashes. */
export const SlugSchema = z
  .string()
  .regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/)
  .meta({ description: 'Workspace slug', example: 'acme' });

/** Identifier with a prefix and a ULID. */
export function idSchema(prefix: IdPrefix, example: string) {
  return z
    .string()
    .regex(idPattern(prefix))
    .meta({ example: `${prefix}_${example}` });
}

export const EndpointIdSchema = idSchema('whe', '01JD2Y8M7K3V9Q4T6W1X5Z0ABC').meta({ description: 'Webhook endpoint id' });
export const DeliveryIdSchema = idSchema('whd', '01JD2Y9P0R6S8T1V3W5X7Y9ZAB').meta({ description: 'Delivery id' });
export const TokenIdSchema = idSchema('tok', '01JD2YA1B2C3D4E5F6G7H8J9KM').meta({ description: 'API token id' });

/**
 * An endpoint's health at a glance (docs/behaviour.md#endpoint-health), from the same
 * counters as the health operation.
 */
const EndpointHealthSummarySchema = z
  .object({
    successRate24h: z.number().min(0).max(1).nullable().meta({
      description:
        'Delivered HTTP attempts / HTTP attempts over the last 24 hourly buckets (as `GET …/health?window=24h`); null with no attempt.',
      example: 0.9841,
    }),
    lastAttemptAt: timestamp
      .nullable()
      .meta({ description: 'Start of the latest recorded HTTP attempt in the last 7 days; null with none.' }),
  })
  .meta({ id: 'WebhookEndpointHealthSummary', example: { successRate24h: 0.9841, lastAttemptAt: '2026-11-25T12:04:59.000Z' } });
export type EndpointHealthSummary = z.infer<typeof EndpointHealthSummarySchema>;

/** The example endpoint's options: a plain header, a secret one (as reads show it) and OAuth 2.0. */
const EXAMPLE_OPTIONS = {
  headers: { 'X-Tenant': 'acme', 'X-Api-Key': REDACTED },
  auth: {
    type: 'oauth2_client_credentials',
    tokenUrl: 'https://auth.example.com/oauth2/token',
    clientId: 'webhooks-sender',
    scope: 'webhooks:receive',
  },
  rateLimitPerSecond: 50,
  filter: { 'data.order.warehouse': { $in: ['ams-1', 'fra-1'] } },
} as const;

const HEADERS_RULES = `At most ${CUSTOM_HEADER_LIMITS.maxHeaders} headers and ${CUSTOM_HEADER_LIMITS.maxTotalBytes} bytes of names and values; names as HTTP allows, values without control characters. Refused (400 \`InvalidHeader\`, naming it): names the service sets or that would break the request or its signature (\`webhook-*\`, \`content-type\`, \`content-length\`, \`host\`, \`transfer-encoding\`, \`connection\`, \`user-agent\`, \`x-trace-id\`, hop-by-hop and \`proxy-*\` headers, \`x-amz-*\`), and \`authorization\` on an endpoint that uses OAuth 2.0. The value of a name that marks a secret (\`authorization\`, \`cookie\`, or containing \`key\`, \`token\`, \`secret\` or \`password\`) is sealed at rest and never read back.`;

/** OAuth 2.0 client credentials as reads show them: never the client secret. */
const OAuthSettingsSchema = z
  .object({
    type: z.literal('oauth2_client_credentials'),
    tokenUrl: z
      .string()
      .meta({ description: 'The token endpoint; redacted to scheme and host for callers without `webhook:write`, as `url` is.' }),
    clientId: z.string(),
    scope: z.string().optional(),
    audience: z.string().optional(),
  })
  .meta({
    id: 'WebhookOAuthSettings',
    description: 'OAuth 2.0 client credentials (docs/behaviour.md#oauth-20-client-credentials); the client secret is write-only.',
  });

/**
 * A filter or null. The filter's schema is `unknown` (the domain checks it) described as an object,
 * so its nullable form says `null` in its own type, or the OpenAPI generator would leave it out.
 */
const nullableFilter = (description: string) => PayloadFilterSchema.nullable().meta({ type: ['object', 'null'], description });

/** Webhook endpoint, as every response shows it: never its secret. */
export const EndpointSchema = z
  .object({
    endpointId: EndpointIdSchema,
    url: z.string().meta({
      description:
        'The receiver URL. In full only for callers whose token grants `webhook:write` (the `write` scope); any other caller sees it redacted to scheme and host, then `/…` (e.g. `https://hooks.example.com/…`), since a URL may carry a secret in its path or query. Audit entries, notifications and domain events always carry the redacted form.',
      example: 'https://hooks.example.com/webhooks',
    }),
    eventTypes: z.array(z.string()).meta({ example: ['webhook.test_event'] }),
    description: z.string().nullable(),
    enabled: z.boolean(),
    consecutiveFailures: z.number().int().meta({ description: 'Consecutive failed attempts; 20 disables the endpoint.' }),
    createdAt: timestamp,
    updatedAt: timestamp,
    headers: z.record(z.string(), z.string()).meta({
      description: `Custom headers sent on every attempt, name → value. A secret value (see \`headers\` on create) always reads \`"${REDACTED}"\`; so does every value for a caller without \`webhook:write\`. Empty: none.`,
    }),
    auth: OAuthSettingsSchema.nullable().meta({ description: 'OAuth 2.0 client credentials; null: none.' }),
    rateLimitPerSecond: z.number().int().nullable().meta({
      description:
        'Most first attempts and retries sent to the endpoint in any second (docs/behaviour.md#delivery-rate-per-endpoint); null: no limit.',
    }),
    filter: nullableFilter(
      'Published events are delivered only when their payload matches it (not applied to test sends, replays or recovery); null: every event of its types.',
    ),
    health: EndpointHealthSummarySchema,
  })
  .meta({
    id: 'WebhookEndpoint',
    example: {
      endpointId: EXAMPLE.endpointId,
      url: EXAMPLE.url,
      eventTypes: ['webhook.test_event', 'webhook.disabled'],
      description: 'Orders service receiver',
      enabled: true,
      consecutiveFailures: 0,
      createdAt: EXAMPLE.created,
      updatedAt: EXAMPLE.updated,
      ...EXAMPLE_OPTIONS,
      health: { successRate24h: 0.9841, lastAttemptAt: '2026-11-25T12:04:59.000Z' },
    },
  });
export type Endpoint = z.infer<typeof EndpointSchema>;
/** An endpoint without its health: what the store keeps and reads in one item. */
export type EndpointCore = Omit<Endpoint, 'health'>;

const eventTypesInput = z
  .array(z.string().min(1).max(EVENT_TYPE_MAX_CHARS))
  .min(1)
  .max(100)
  .refine(distinctItems, 'event types must not repeat')
  .meta({ description: 'Event types to subscribe to; each must be in the event-type catalogue.' });
const urlInput = z
  .string()
  .min(1)
  .max(2048)
  .meta({ description: 'https URL of the receiver.', example: 'https://hooks.example.com/webhooks' });
const descriptionInput = z.string().max(500).nullable();
/**
 * Custom headers as written, name → value (`null` removes one on update). Checked by
 * lambdas/domain/endpoint-options.ts, which names the header of each problem (400 `InvalidHeader`),
 * so the schema here only describes them, as the filter's does.
 */
const headersInput = (update: boolean) =>
  z.unknown().meta({
    type: 'object',
    additionalProperties: update ? { type: ['string', 'null'] } : { type: 'string' },
    description: update
      ? `Merged by name (in any case) into the stored headers; \`null\` removes one; names not sent are kept, so a secret need not be sent again, unless \`url\` moves to another origin (400 \`InvalidHeader\` naming the secret headers to send again or remove). ${HEADERS_RULES}`
      : `Custom headers, name → value. ${HEADERS_RULES}`,
  });
const rateInput = z
  .number()
  .int()
  .min(RATE_LIMIT_PER_SECOND_BOUNDS.min)
  .max(RATE_LIMIT_PER_SECOND_BOUNDS.max)
  .nullable()
  .meta({
    description: `Most first attempts and retries sent to the endpoint in any second, across every dispatcher (${RATE_LIMIT_PER_SECOND_BOUNDS.min}–${RATE_LIMIT_PER_SECOND_BOUNDS.max}); what is over waits in the queue without spending a retry. null: no limit.`,
  });
const filterInput = nullableFilter(
  'A payload filter (the `WebhookFilter` schema): published events are delivered only when their payload matches it. 400 `InvalidFilter` naming each place when invalid; null: none.',
);
/** OAuth 2.0 client credentials as written; `clientSecret` is write-only. */
const oauthInput = (secret: 'required' | 'optional') =>
  z
    .strictObject({
      type: z.literal('oauth2_client_credentials'),
      tokenUrl: z.string().min(1).max(2048).meta({
        description: 'https URL of the token endpoint, under the same rules as a receiver URL (400 `InvalidAuth` otherwise).',
      }),
      clientId: z.string().min(1).max(256),
      clientSecret:
        secret === 'required'
          ? z.string().min(1).max(1024)
          : z.string().min(1).max(1024).optional().meta({
              description:
                'Omit to keep the stored one, unless the endpoint has no OAuth 2.0 yet, or `tokenUrl` or the endpoint URL moves to another origin (400 `InvalidAuth`: a secret is never sent to a new host without being given again).',
            }),
      scope: z.string().min(1).max(1024).optional(),
      audience: z.string().min(1).max(1024).optional(),
    })
    .meta({
      description: 'OAuth 2.0 client credentials: the dispatcher gets a token from `tokenUrl` and sends it as `Authorization: Bearer`.',
    });

/** Body of create endpoint. */
export const CreateEndpointBodySchema = z
  .strictObject({
    url: urlInput,
    eventTypes: eventTypesInput,
    description: descriptionInput.optional(),
    enabled: z.boolean().optional().meta({ description: 'Defaults to true.' }),
    headers: headersInput(false).optional(),
    auth: oauthInput('required').nullable().optional(),
    rateLimitPerSecond: rateInput.optional(),
    filter: filterInput.optional(),
  })
  .meta({
    id: 'CreateWebhookEndpoint',
    example: {
      url: EXAMPLE.url,
      eventTypes: ['webhook.test_event', 'webhook.disabled'],
      description: 'Orders service receiver',
      headers: { 'X-Tenant': 'acme', 'X-Api-Key': 'k_live_8f2c…' },
      auth: { ...EXAMPLE_OPTIONS.auth, clientSecret: 'cs_7d1e…' },
      rateLimitPerSecond: EXAMPLE_OPTIONS.rateLimitPerSecond,
      filter: EXAMPLE_OPTIONS.filter,
    },
  });

/** Body of update endpoint: only the fields sent change. */
export const UpdateEndpointBodySchema = z
  .strictObject({
    url: urlInput.optional(),
    eventTypes: eventTypesInput.optional(),
    description: descriptionInput.optional(),
    enabled: z.boolean().optional(),
    headers: headersInput(true).optional(),
    auth: oauthInput('optional').nullable().optional().meta({ description: 'Replaces the OAuth 2.0 settings; null removes them.' }),
    rateLimitPerSecond: rateInput.optional(),
    filter: filterInput.optional(),
  })
  .meta({
    id: 'UpdateWebhookEndpoint',
    example: {
      url: 'https://hooks.example.com/webhooks/v2',
      enabled: true,
      headers: { 'X-Tenant': 'acme-eu', 'X-Old': null },
      rateLimitPerSecond: 20,
    },
  });

/** Response of rotate secret: the only place a signing secret is ever shown. */
export const RotatedSecretSchema = z
  .object({
    endpointId: EndpointIdSchema,
    secret: z.string().meta({
      description: 'New signing secret, shown once: `whsec_` + base64 of 32 random bytes.',
      example: 'whsec_C+6hb2JHdDKEcK2+A1skMC5GXPiSP2I5EjpobvCtJLk=',
    }),
    previousSecretExpiresAt: timestamp
      .nullable()
      .meta({ description: `End of the ${SECRET_GRACE_HOURS} h grace window of the replaced secret.` }),
  })
  .meta({
    id: 'RotatedSecret',
    example: {
      endpointId: EXAMPLE.endpointId,
      secret: 'whsec_C+6hb2JHdDKEcK2+A1skMC5GXPiSP2I5EjpobvCtJLk=',
      previousSecretExpiresAt: '2026-11-26T12:05:00.000Z',
    },
  });
export type RotatedSecret = z.infer<typeof RotatedSecretSchema>;

/** Delivery status (docs/behaviour.md#delivery-statuses). */
const DeliveryStatusSchema = z.enum(DELIVERY_STATUSES);
export type DeliveryStatus = z.infer<typeof DeliveryStatusSchema>;

/** Delivery summary. */
export const DeliverySchema = z
  .object({
    deliveryId: DeliveryIdSchema,
    endpointId: EndpointIdSchema,
    status: DeliveryStatusSchema,
    attempts: z.number().int(),
    nextAttemptAt: timestamp.nullable(),
    eventType: z.string(),
    eventId: z.string().nullable().meta({
      description:
        "The event this delivery carries: the publisher's event id (the EventBridge event id; for the service's own events, the outbox id of the change), the same on every delivery of the event, and kept by a replay. A test send has its own, a fresh UUID. Never sent to the receiver (the body stays `deliveryId`, `eventType`, `payload`). Filter the workspace log by it with `eventId`. Null only for a delivery stored without one.",
      example: '6a7e3b2c-5d41-4f0e-9b8a-1c2d3e4f5a6b',
    }),
    payload: z.unknown(),
    replayedFrom: z.string().nullable().meta({ description: 'The delivery this one replays; null when it is no replay.' }),
    lastResponseStatus: z.number().int().nullable(),
    lastError: z.string().nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({
    id: 'Delivery',
    example: {
      deliveryId: EXAMPLE.deliveryId,
      endpointId: EXAMPLE.endpointId,
      status: 'delivered',
      attempts: 1,
      nextAttemptAt: null,
      eventType: 'webhook.test_event',
      eventId: '6a7e3b2c-5d41-4f0e-9b8a-1c2d3e4f5a6b',
      payload: {
        message: 'This is a test event from the webhook delivery service.',
        sentAt: EXAMPLE.updated,
        endpointId: EXAMPLE.endpointId,
      },
      replayedFrom: null,
      lastResponseStatus: 200,
      lastError: null,
      createdAt: EXAMPLE.updated,
      updatedAt: '2026-11-25T12:05:01.000Z',
    },
  });
export type Delivery = z.infer<typeof DeliverySchema>;

/** One replay of a delivery, as its source's GET lists it. */
const DeliveryReplaySchema = z
  .object({
    deliveryId: DeliveryIdSchema,
    status: DeliveryStatusSchema,
    createdAt: timestamp,
  })
  .meta({ id: 'DeliveryReplay', description: 'A replay of this delivery: its id, its status now, and when it was made.' });

/** A delivery as its own GET shows it: the summary and its newest replays. */
export const DeliveryDetailSchema = DeliverySchema.extend({
  replays: z
    .array(DeliveryReplaySchema)
    .max(DELIVERY_REPLAYS_SHOWN)
    .meta({
      description: `The newest ${DELIVERY_REPLAYS_SHOWN} replays of this delivery (interactive or by a recovery job), newest first; empty when it has none. Each replay's own resource names this delivery in \`replayedFrom\`. Only on the GET of one delivery: list items do not carry it.`,
    }),
}).meta({
  id: 'DeliveryDetail',
  example: {
    deliveryId: EXAMPLE.deliveryId,
    endpointId: EXAMPLE.endpointId,
    status: 'dead_lettered',
    attempts: 7,
    nextAttemptAt: null,
    eventType: 'order.shipped',
    eventId: '6a7e3b2c-5d41-4f0e-9b8a-1c2d3e4f5a6b',
    payload: { orderId: 'ord_42' },
    replayedFrom: null,
    lastResponseStatus: 503,
    lastError: 'http_503',
    createdAt: EXAMPLE.updated,
    updatedAt: '2026-11-25T12:15:31.000Z',
    replays: [{ deliveryId: 'whd_01JD2Z0A1B2C3D4E5F6G7H8J9K', status: 'delivered', createdAt: '2026-11-25T13:00:00.000Z' }],
  },
});

/** Immutable evidence of one attempt. */
export const AttemptSchema = z
  .object({
    ordinal: z.number().int(),
    outcome: z.enum(['delivered', 'failed', 'failed_permanent', 'dead_lettered']),
    timestamp,
    durationMs: z.number().int().nullable(),
    failureReason: z
      .string()
      .nullable()
      .meta({
        description: `Why the attempt failed (null when delivered): \`http_<status>\`, \`redirect_not_followed_<status>\`, \`${PROTOCOL_UPGRADE}\` (a 101 or any upgrade), \`${INVALID_STATUS}\` (a status outside 100–599), \`timeout\`, \`connection_refused\`, \`connection_reset\`, \`tls_error: <code>\`, \`dns_failure\`, \`network_error[: <code>]\`, \`invalid_url: <detail>\`, \`destination_not_public\`, \`service_error: <cause>\`, \`${AUTH_FAILED}\` (the endpoint's OAuth 2.0 token endpoint gave no token, so nothing was sent to the receiver; retried); for bookkeeping \`endpoint_disabled\`, \`retries_exhausted\`, \`queue_receives_exhausted\`.`,
      }),
    requestHeaders: z.record(z.string(), z.string()),
    responseStatus: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'The status the receiver answered (as sent, even outside 100–599); null without a response.' }),
    responseBody: z.string().nullable(),
  })
  .meta({
    id: 'DeliveryAttempt',
    example: {
      ordinal: 1,
      outcome: 'failed',
      timestamp: EXAMPLE.updated,
      durationMs: 412,
      failureReason: 'http_503',
      requestHeaders: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'webhook-id': EXAMPLE.deliveryId,
        'webhook-timestamp': '1795608300',
        // Signed by the document generator (lib/docs/openapi-document.ts) with the signing module.
        'webhook-signature': 'v1,',
        'x-trace-id': '6f1c2a9e-3b7d-4e58-9a0c-2d4b8e7f1a36',
      },
      responseStatus: 503,
      responseBody: '{"error":"maintenance"}',
    },
  });
export type Attempt = z.infer<typeof AttemptSchema>;

/** Scope string: a bundle or a permission. */
const ScopeSchema = z.enum(SCOPES).meta({ id: 'Scope' });

/** The kinds of actor an audit entry names: a workspace API token, a portal session, a staff member, or the service itself. */
const AUDIT_ACTOR_KINDS = ['token', 'portal_session', 'staff', 'system'] as const;

/** Who made an audited change (docs/behaviour.md#audit-events). */
const AuditActorSchema = z
  .object({
    kind: z.enum(AUDIT_ACTOR_KINDS).meta({
      description:
        "`token` (a workspace API token), `portal_session` (a portal link's session), `staff` (a platform staff member signed in with the company identity provider) or `system` (the service itself: the dispatcher, the admin CLI, a recovery that could not go on).",
    }),
    id: z.string().meta({
      description:
        'The token id, the portal session id (`wps_…`), the staff session id (`wcs_…`; `staff` where the workspace is not shown who), or `system`.',
      example: EXAMPLE.tokenId,
    }),
    name: z.string().optional().meta({
      description:
        "The token's name when the entry was written, so a revoked or renamed token still reads as it was; absent for `system` and for tokens that carry none.",
      example: 'CI deploy bot',
    }),
    email: z.string().optional().meta({ description: "A staff member's email (kind `staff`), on audit events only." }),
  })
  .meta({ id: 'AuditActor', example: { kind: 'token', id: EXAMPLE.tokenId, name: 'CI deploy bot' } });

/** Who made an audited change. */
export type AuditActor = z.infer<typeof AuditActorSchema>;

/** The API token the reference's examples show (a token as listed, and as created with its raw value). */
const API_TOKEN_EXAMPLE = {
  tokenId: EXAMPLE.tokenId,
  name: 'CI deploy bot',
  scopes: ['read', 'webhook:write'],
  createdAt: EXAMPLE.created,
  createdBy: { kind: 'token', id: 'tok_01JD2YA1B2C3D4E5F6G7H8J9KN', name: 'admin' },
} as const;

/** API token metadata (never the token). */
export const ApiTokenSchema = z
  .object({
    tokenId: TokenIdSchema,
    name: z.string(),
    scopes: z.array(ScopeSchema),
    createdAt: timestamp,
    createdBy: AuditActorSchema.nullable().meta({
      description:
        'Who created the token: a token, a portal session, `system` (the admin CLI, the platform API), or platform staff (`{kind: "staff", id: "staff"}`, never their email); null for tokens created before this was kept.',
    }),
  })
  .meta({ id: 'ApiToken', example: API_TOKEN_EXAMPLE });
export type ApiToken = z.infer<typeof ApiTokenSchema>;

/** Body of create API token. */
export const CreateApiTokenBodySchema = z
  .strictObject({
    name: z.string().min(1).max(100),
    scopes: z.array(ScopeSchema).min(1).max(20).meta({ description: 'Must grant nothing beyond the calling token.' }),
  })
  .meta({ id: 'CreateApiToken', example: { name: 'CI deploy bot', scopes: ['read', 'webhook:write'] } });

/** Response of create API token: the raw token, shown once. */
export const CreatedApiTokenSchema = ApiTokenSchema.extend({
  token: z.string().meta({ description: 'The raw token, shown once; only its hash is stored.' }),
}).meta({
  id: 'CreatedApiToken',
  example: { ...API_TOKEN_EXAMPLE, token: 'whk_XRhrMszERlPTxhFuFHn013gIiG_fokwq9Db8t1JbI3c' },
});
export type CreatedApiToken = z.infer<typeof CreatedApiTokenSchema>;

/** Workspace member. */
export const MemberSchema = z
  .object({ memberId: idSchema('mem', '01JD2YB3C4D5E6F7G8H9J0K1MN'), email: z.string(), role: z.enum(MEMBER_ROLES) })
  .meta({ id: 'Member', example: { memberId: 'mem_01JD2YB3C4D5E6F7G8H9J0K1MN', email: 'owner@acme.test', role: 'owner' } });
export type Member = z.infer<typeof MemberSchema>;

/** Audit event. */
export const AuditEventSchema = z
  .object({
    auditEventId: idSchema('aud', '01JD2YC4D5E6F7G8H9J0K1M2NP'),
    action: z.string().meta({ example: 'webhook.delivery_replayed' }),
    actor: AuditActorSchema,
    actorId: z.string().meta({ description: 'The same as `actor.id`: the token id, or `system` for the service itself.' }),
    targetId: z.string(),
    detail: z.record(z.string(), z.unknown()),
    createdAt: timestamp,
  })
  .meta({
    id: 'AuditEvent',
    example: {
      auditEventId: 'aud_01JD2YC4D5E6F7G8H9J0K1M2NP',
      action: 'webhook.delivery_replayed',
      actor: { kind: 'token', id: EXAMPLE.tokenId, name: 'CI deploy bot' },
      actorId: EXAMPLE.tokenId,
      targetId: 'whd_01JD2YE6F7G8H9J0K1M2N3P4QR',
      detail: { replayedFrom: EXAMPLE.deliveryId, endpointId: EXAMPLE.endpointId },
      createdAt: EXAMPLE.updated,
    },
  });
export type AuditEvent = z.infer<typeof AuditEventSchema>;

/** A notification id. */
export const NotificationIdSchema = idSchema('ntf', '01JD2YD5E6F7G8H9J0K1M2N3PQ').meta({ description: 'Notification id' });

/** Workspace notification. */
export const NotificationSchema = z
  .object({
    notificationId: NotificationIdSchema,
    kind: z.string().meta({ example: 'delivery.dead_lettered' }),
    message: z.string(),
    endpointId: z.string().nullable(),
    deliveryId: z.string().nullable(),
    createdAt: timestamp,
    acknowledgedAt: timestamp.nullable().meta({
      description:
        'When the notification was first acknowledged (`POST …/notifications/{notificationId}/ack`); null until then. Set once: acknowledging again keeps it.',
    }),
  })
  .meta({
    id: 'Notification',
    example: {
      notificationId: 'ntf_01JD2YD5E6F7G8H9J0K1M2N3PQ',
      kind: 'delivery.dead_lettered',
      message:
        'Delivery whd_01JD2Y9P0R6S8T1V3W5X7Y9ZAB (order.shipped) to https://hooks.example.com/webhooks stopped after 7 attempts (last: http_503). The endpoint stopped receiving it; replay it once the receiver is fixed.',
      endpointId: EXAMPLE.endpointId,
      deliveryId: EXAMPLE.deliveryId,
      createdAt: EXAMPLE.updated,
      acknowledgedAt: null,
    },
  });
export type Notification = z.infer<typeof NotificationSchema>;

/** Workspace overview. */
export const OverviewSchema = z
  .object({
    workspace: z.object({ slug: SlugSchema, name: z.string(), createdAt: timestamp }),
    webhooks: z.object({ total: z.number().int(), enabled: z.number().int(), disabled: z.number().int() }),
    members: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'Members of the workspace; null for a caller without `member:list` (a portal session).' }),
    apiTokens: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'Active API tokens of the workspace; null for a caller without `token:list` (a portal session).' }),
    deliveries24h: z
      .object({
        delivered: z.number().int().meta({ description: 'Delivered HTTP attempts.' }),
        failed: z.number().int().meta({ description: 'Failed HTTP attempts, retryable and permanent.' }),
        deadLettered: z.number().int().meta({ description: 'Deliveries marked `dead_lettered`.' }),
      })
      .meta({
        description:
          'Over the last 24 hourly buckets, every endpoint of the workspace, from the same counters as `GET …/webhooks/{endpointId}/health` (docs: Endpoint health).',
      }),
    deadLetteredUnreplayed24h: z.number().int().min(0).meta({
      description:
        'Deliveries dead-lettered in the last 24 hourly buckets that have no replay yet (interactive or by a recovery job): `deliveries24h.deadLettered` less those replayed since, never below 0. A second replay of the same delivery does not count again.',
    }),
    caller: z
      .object({
        tokenId: z.string(),
        scopes: z.array(z.string()),
        permissions: z
          .array(z.enum(PERMISSIONS))
          .meta({ description: 'What the calling token may do: its scopes expanded to permissions.' }),
      })
      .meta({ description: 'The token making the request, so a client (the console) can offer only what the token may do.' }),
  })
  .meta({
    id: 'WorkspaceOverview',
    example: {
      workspace: { slug: 'acme', name: 'Acme Inc.', createdAt: EXAMPLE.created },
      webhooks: { total: 3, enabled: 2, disabled: 1 },
      members: 4,
      apiTokens: 2,
      deliveries24h: { delivered: 1240, failed: 18, deadLettered: 1 },
      deadLetteredUnreplayed24h: 1,
      caller: {
        tokenId: EXAMPLE.tokenId,
        scopes: ['read'],
        permissions: ['member:list', 'token:list', 'audit:list', 'notification:list', 'event-type:list', 'webhook:read', 'webhook:list'],
      },
    },
  });
export type Overview = z.infer<typeof OverviewSchema>;

/** Event type of the catalogue. */
export const EventTypeSchema = z
  .object({
    name: z.string().meta({ example: 'webhook.test_event' }),
    description: z.string(),
    payloadSchema: z.record(z.string(), z.unknown()).meta({ description: 'JSON Schema of the payload.' }),
    builtIn: z.boolean(),
  })
  .meta({
    id: 'EventType',
    example: {
      name: 'webhook.test_event',
      description: 'Synthetic event sent by a test send, to check an endpoint end to end.',
      payloadSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { message: { type: 'string' }, sentAt: { type: 'string' }, endpointId: { type: 'string' } },
        required: ['message', 'sentAt', 'endpointId'],
        additionalProperties: false,
      },
      builtIn: true,
    },
  });
