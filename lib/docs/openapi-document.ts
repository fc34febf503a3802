/**
 * The OpenAPI 3.1 document, generated from the contract at build time
 * (docs/architecture.md#reference-documents). Pure: CDK calls it at synth and
 * writes the result; the local stack calls it at start. Its prose is built from
 * the service's constants and its signed examples are signed by the signing
 * module itself, so the document cannot drift from the code.
 * The document lints clean under Redocly's `recommended` rules
 * (test/docs/openapi-lint.test.ts).
 */
import { OpenAPIRegistry, OpenApiGeneratorV31, type ResponseConfig } from '@asteasolutions/zod-to-openapi';
import {
  isReferenceObject,
  type ExampleObject,
  type HeaderObject,
  type MediaTypeObject,
  type OpenAPIObject,
  type ParameterObject,
  type PathItemObject,
  type ReferenceObject,
  type RequestBodyObject,
  type ResponseObject,
  type SchemaObject,
} from 'openapi3-ts/oas31';
import { z } from 'zod';
import { ERROR_STATUS, GATEWAY_DETAILS, ProblemSchema, errorTitle, errorType, type ErrorTag, type Problem } from '#lambdas/contract/errors';
import { DISABLE_THRESHOLD, MAX_PAYLOAD_BYTES, SECRET_GRACE_HOURS, SEND_LIMITS, USER_AGENT } from '#lambdas/contract/limits';
import { PAGE_LIMIT } from '#lambdas/contract/pagination';
import { MAX_RETRIES, RETRY_DELAY_SECONDS, retryDelaySeconds } from '#lambdas/domain/backoff';
import { signatureHeader } from '#lambdas/domain/signing';
import { type EventTypeInfo } from '#lambdas/contract/events';
import { OPERATIONS, declaredErrors, routeKind, type OperationDef } from '#lambdas/contract/operations';
import { workspaceLimitRefusal } from '#lambdas/contract/rate-limits';
import { DeliveryIdSchema } from '#lambdas/contract/schemas';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_WINDOW_HOURS,
  IDEMPOTENT_REPLAYED_HEADER,
  IdempotencyKeySchema,
} from '#lambdas/contract/idempotency';

/** Options of {@link buildOpenApiDocument}. */
export interface OpenApiOptions {
  /** Base URL of the API, when known. @default '/' (the host that serves the document) */
  readonly serverUrl?: string;
  /** The event-type catalogue, listed under `webhooks`. */
  readonly eventTypes: readonly EventTypeInfo[];
  /** Document version. @default '1.0.0' */
  readonly version?: string;
  /**
   * The document of a local stack, whose development switch lets endpoint URLs use http on
   * loopback hosts: the URL pattern then admits http too. @default false (https only)
   */
  readonly loopbackHttp?: boolean;
}

/** Names of the security schemes the document defines. */
const SECURITY_SCHEMES = { bearer: 'bearerAuth', sigv4: 'sigv4', webhookSignature: 'webhookSignature' } as const;

/** The tag of the platform API's (`iam`) routes: the OpenAPI tag they are listed under. */
const PLATFORM_TAG = 'Platform';

/** What an operation's description ends with: who may call it, its bucket, its MCP tool. */
function callerNote(def: OperationDef): string {
  const bucket = `Rate-limit bucket \`${def.rateLimit}\``;
  switch (routeKind(def)) {
    case 'iam':
      return `Platform API: a request signed with AWS Signature Version 4 (service \`execute-api\`) by an IAM principal the stage allows (\`platformPrincipals\`); any other is 403. ${bucket}, per principal. Not an MCP tool.`;
    case 'public':
      return `Public: no credential. ${bucket}, per client address. Not an MCP tool.`;
    default:
      return `${def.permission ? `Requires permission \`${def.permission}\`.` : 'Any token of the workspace may call it.'} ${bucket}. MCP tool \`${def.mcpTool ?? ''}\`.`;
  }
}

/**
 * The values the webhook examples are signed with, so a receiver can check its
 * verifier against any webhook example of the document.
 */
export const SIGNATURE_EXAMPLE = {
  secret: 'whsec_C+6hb2JHdDKEcK2+A1skMC5GXPiSP2I5EjpobvCtJLk=',
  webhookId: 'whd_01JD2Y9P0R6S8T1V3W5X7Y9ZAB',
  timestamp: 1795608300,
  traceId: '6f1c2a9e-3b7d-4e58-9a0c-2d4b8e7f1a36',
  userAgent: USER_AGENT,
} as const;

const SIGNATURE_DOC = [
  'Each delivery is an HTTP POST with a JSON body of exactly `{deliveryId, eventType, payload}` and the',
  '[Standard Webhooks](https://www.standardwebhooks.com/) headers `webhook-id` (the delivery id),',
  '`webhook-timestamp` (Unix seconds, fresh on every attempt) and `webhook-signature`: space-separated',
  `\`v1,<base64>\` entries, newest secret first (two entries during a ${SECRET_GRACE_HOURS}-hour rotation grace window).`,
  'The signature is HMAC-SHA256 keyed with the base64-decoded part of the `whsec_` secret over',
  '`<webhook-id>.<webhook-timestamp>.<raw body>`. Verify the raw body before parsing, accept any',
  'matching `v1` entry, reject timestamps more than five minutes from your clock, and deduplicate',
  'on `webhook-id`: delivery is at least once. `x-trace-id` names the attempt for support.',
].join(' ');

const DELIVERY_DOC = [
  'Requests also carry `content-type: application/json` and `user-agent: ' + SIGNATURE_EXAMPLE.userAgent + '`.',
  `Answer 2xx within ${SEND_LIMITS.deadlineMs / 1000} seconds. 5xx, 408, 429, timeouts and network errors are retried with a linear`,
  `backoff (${RETRY_DELAY_SECONDS} s × attempt, at most ${retryDelaySeconds(MAX_RETRIES) / 60} minutes apart, ${MAX_RETRIES} retries), then the delivery is dead-lettered;`,
  'any other status, 3xx included (redirects are not followed), fails the delivery permanently.',
  `${DISABLE_THRESHOLD} consecutive failures disable the endpoint. Failed deliveries can be replayed.`,
].join(' ');

const EXAMPLES_DOC = [
  `The examples of every event are signed with the example secret \`${SIGNATURE_EXAMPLE.secret}\``,
  `at \`webhook-timestamp\` ${SIGNATURE_EXAMPLE.timestamp}: a verifier can be checked against them`,
  '(with its clock set to that time).',
].join(' ');

/**
 * Example `detail` of each error tag's problem document (documentation only).
 * Only members the Problem schema declares are shown: the examples are
 * validated against it by the linter, which rejects undeclared members.
 */
const PROBLEM_DETAIL: Record<ErrorTag, { detail: string; extensions?: Pick<Problem, 'issues'> }> = {
  ValidationError: {
    detail: 'Invalid body: body.url: Invalid input: expected string, received undefined',
    extensions: { issues: [{ path: 'body.url', message: 'Invalid input: expected string, received undefined' }] },
  },
  InvalidWebhookUrl: { detail: 'host localhost is a localhost name, not a public host' },
  InvalidFilter: {
    detail: 'Invalid filter: body.filter["data.total"].$gt: $gt takes a number',
    extensions: { issues: [{ path: 'body.filter["data.total"].$gt', message: '$gt takes a number' }] },
  },
  InvalidHeader: {
    detail: 'body.headers["Content-Type"]: The header Content-Type is set by the service or would break the request or its signature',
    extensions: {
      issues: [
        {
          path: 'body.headers["Content-Type"]',
          message: 'The header Content-Type is set by the service or would break the request or its signature',
        },
      ],
    },
  },
  InvalidAuth: {
    detail: 'body.auth.tokenUrl: host localhost is a localhost name, not a public host',
    extensions: { issues: [{ path: 'body.auth.tokenUrl', message: 'host localhost is a localhost name, not a public host' }] },
  },
  InvalidBranding: {
    detail: 'Invalid branding: accentColor has a contrast of 2.41:1 in the console; at least 4.5:1 is needed (WCAG AA)',
    extensions: {
      issues: [{ path: 'body.accentColor', message: 'has a contrast of 2.41:1 in the console; at least 4.5:1 is needed (WCAG AA)' }],
    },
  },
  ReturnUrlNotAllowed: {
    detail:
      'returnUrl: its origin https://evil.example is not one the stage lets frame the console (setting consoleFrameAncestors: https://app.example.com)',
  },
  UnknownEventType: { detail: 'Unknown event type: order.cancelled. GET /workspaces/{slug}/event-types lists the catalogue.' },
  Unauthorized: { detail: 'Send a workspace API token as `Authorization: Bearer <token>`' },
  Forbidden: { detail: "This operation needs the permission webhook:write, which the token's scopes do not grant" },
  WorkspaceNotFound: { detail: 'No workspace "acme" for this token' },
  EndpointNotFound: { detail: 'No webhook endpoint whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC in workspace acme' },
  DeliveryNotFound: { detail: 'No delivery whd_01JD2Y9P0R6S8T1V3W5X7Y9ZAB in workspace acme' },
  TokenNotFound: { detail: 'No API token tok_01JD2YA1B2C3D4E5F6G7H8J9KM in workspace acme' },
  JobNotFound: { detail: 'No job whj_01JD2YC5D6E7F8G9H0J1K2M3NP in workspace acme' },
  NotificationNotFound: { detail: 'No notification ntf_01JD2YD5E6F7G8H9J0K1M2N3PQ in workspace acme' },
  PortalSessionNotFound: { detail: 'No portal session wps_01JD2YE6F7G8H9J0K1M2N3P4QR in workspace acme' },
  InvalidIdToken: { detail: 'The ID token was refused: its audience (aud) does not contain the console client id.' },
  NoConsoleAccess: {
    detail: "ana@platform.example is in none of the identity provider's groups that give access to the console (claim groups)",
  },
  ConsoleSessionNotFound: { detail: 'No staff session wcs_01JD2YF7G8H9J0K1M2N3P4Q5RS (it may have ended already)' },
  StaffSignInDisabled: {
    detail: 'Staff sign-in is not set up on this stage (no consoleOidc setting): sign in with a token',
  },
  PortalLinkInvalid: {
    detail: 'This portal link cannot be opened: links work once, for ten minutes. Ask for a new one where you found it.',
  },
  RouteNotFound: { detail: 'No route GET /workspaces/acme/nope' },
  MethodNotAllowed: { detail: 'Method PUT is not allowed here' },
  EndpointDisabled: { detail: 'Endpoint whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC is disabled; re-enable it (PATCH enabled: true) before replaying' },
  DeliveryNotReplayable: {
    detail: 'Delivery whd_01JD2Y9P0R6S8T1V3W5X7Y9ZAB is delivered; only failed, failed_permanent, dead_lettered deliveries can be replayed',
  },
  RecoveryInProgress: {
    detail:
      'Recovery job whj_01JD2YC5D6E7F8G9H0J1K2M3NP of endpoint whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC is still running; cancel it or wait for it to finish',
  },
  Conflict: { detail: 'Another rotation of this secret happened at the same time; retry.' },
  PayloadTooLarge: { detail: `The payload is 300000 bytes; at most ${MAX_PAYLOAD_BYTES} are accepted` },
  UnsupportedMediaType: { detail: 'Send the body as application/json (got text/plain)' },
  IdempotencyKeyInProgress: {
    detail: `A request with ${IDEMPOTENCY_KEY_HEADER} "6f1c2a9e-3b7d-4e58-9a0c-2d4b8e7f1a36" is still running; retry when it has finished to get its answer`,
  },
  IdempotencyKeyReused: {
    detail: `${IDEMPOTENCY_KEY_HEADER} "6f1c2a9e-3b7d-4e58-9a0c-2d4b8e7f1a36" was already used by this token for another request (another operation, path or body) in the last ${IDEMPOTENCY_WINDOW_HOURS} h; use a new key for a new request`,
  },
  RateLimited: { detail: 'Too many rest_write requests for this token; retry after 12 s' },
  InternalError: { detail: 'Something went wrong on our side. Quote trace id 1-67a0c0de-4f1e2d3c4b5a69788796a5b4 to support.' },
  BadGateway: { detail: GATEWAY_DETAILS.noUsableAnswer },
  GatewayTimeout: { detail: GATEWAY_DETAILS.timeout },
};

const EXAMPLE_TRACE_ID = '1-67a0c0de-4f1e2d3c4b5a69788796a5b4';

/** The response headers every answer of an operation carries, as reusable components (docs/behaviour.md#errors). */
const RESPONSE_HEADERS = {
  /** `x-trace-id` of a success: always set by the operation's function. */
  traceId: 'TraceId',
  /** `x-trace-id` of a refusal: set unless API Gateway refused before any function ran. */
  problemTraceId: 'ProblemTraceId',
  cacheControl: 'CacheControl',
  retryAfter: 'RetryAfter',
} as const;

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** The headers of a success answer (with an idempotent operation's replay header, when it has one). */
function successHeaders(extra: Record<string, HeaderObject> = {}): Record<string, HeaderObject | ReferenceObject> {
  return { 'x-trace-id': headerRef(RESPONSE_HEADERS.traceId), 'cache-control': headerRef(RESPONSE_HEADERS.cacheControl), ...extra };
}

function registerResponseHeaders(registry: OpenAPIRegistry): void {
  registry.registerComponent('headers', RESPONSE_HEADERS.traceId, {
    description: "Names this request; quote it in a support request. The same id as a problem's `traceId`.",
    required: true,
    schema: { type: 'string', examples: [EXAMPLE_TRACE_ID] },
  });
  registry.registerComponent('headers', RESPONSE_HEADERS.problemTraceId, {
    description:
      "Names this request, as the problem's `traceId` does. Absent only on API Gateway's own refusals (a missing or unknown token, an unknown route, its throttling), which answer before any function runs; their problem still carries the `traceId`.",
    schema: { type: 'string', examples: [EXAMPLE_TRACE_ID] },
  });
  registry.registerComponent('headers', RESPONSE_HEADERS.cacheControl, {
    description: 'Every API answer, success or problem, is for this caller only and now: never stored by a cache.',
    required: true,
    schema: { type: 'string', enum: ['no-store'] },
  });
  registry.registerComponent('headers', RESPONSE_HEADERS.retryAfter, {
    description: 'Seconds to wait before retrying.',
    required: true,
    schema: { type: 'integer', minimum: 1, examples: [12] },
  });
}

/**
 * The endpoint URL rule (lambdas/domain/webhook-url.ts) as far as a schema can state it: the
 * scheme, case-blind, as the URL parser reads it. The host rules (public, no credentials) stay in
 * prose: they depend on DNS and address classes.
 */
const HTTPS_URL_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]:';
const LOOPBACK_HTTP_URL_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]?:';

/** Puts the URL rule on the `url` of the endpoint bodies that take one. */
function declareUrlRule(doc: OpenAPIObject, loopbackHttp: boolean): void {
  for (const name of ['CreateWebhookEndpoint', 'UpdateWebhookEndpoint']) {
    const url = (doc.components?.schemas?.[name] as SchemaObject | undefined)?.properties?.url as SchemaObject | undefined;
    if (!url) throw new Error(`${name}: no url property`);
    url.pattern = loopbackHttp ? LOOPBACK_HTTP_URL_PATTERN : HTTPS_URL_PATTERN;
    url.description = [
      'URL of the receiver: `https` only, to a public host (no localhost, private or reserved addresses, no credentials), at most 2048 characters.',
      loopbackHttp
        ? 'This is a local stack: its development switch also allows `http` to loopback hosts (localhost, 127.0.0.0/8, [::1]); a deployed stack never does.'
        : "Only the local stack's development switch allows `http` (to loopback hosts); a deployed stack never does.",
      'A URL the rules refuse is answered 400 `InvalidWebhookUrl` with the `rule` that failed.',
    ].join(' ');
  }
}

/**
 * The example problem document of a tag; with `def`, as that operation answers it: its refusal at
 * its workspace limit, and its own bucket in the token's rate-limit refusal.
 */
export function problemExample(tag: ErrorTag, def?: OperationDef): Problem {
  if (def?.workspaceLimit && workspaceLimitTag(def) === tag) return problemOf(tag, { detail: workspaceLimitRefusal(def.workspaceLimit) });
  if (def && tag === 'RateLimited') return tokenRateLimitedExample(def);
  return problemOf(tag, PROBLEM_DETAIL[tag]);
}

/** The example of the token's own rate-limit refusal in the operation's bucket. */
function tokenRateLimitedExample(def: OperationDef): Problem {
  return problemOf('RateLimited', { detail: `Too many ${def.rateLimit} requests for this token; retry after 12 s` });
}

function problemOf(tag: ErrorTag, { detail, extensions }: { detail: string; extensions?: Pick<Problem, 'issues'> }): Problem {
  return { type: errorType(tag), title: errorTitle(tag), status: ERROR_STATUS[tag], detail, tag, traceId: EXAMPLE_TRACE_ID, ...extensions };
}

/** The tag an operation answers at its workspace limit: 429 for a per-minute quota, 409 for a count. */
function workspaceLimitTag(def: OperationDef): ErrorTag | undefined {
  if (!def.workspaceLimit) return undefined;
  return def.workspaceLimit === 'endpoints' || def.workspaceLimit === 'apiTokens' ? 'Conflict' : 'RateLimited';
}

function errorResponses(def: OperationDef) {
  const byStatus = new Map<number, ErrorTag[]>();
  for (const tag of declaredErrors(def)) {
    const status = ERROR_STATUS[tag];
    byStatus.set(status, [...(byStatus.get(status) ?? []), tag]);
  }
  const limitTag = workspaceLimitTag(def);
  const limitName =
    def.workspaceLimit === 'endpoints'
      ? "the workspace's endpoint limit"
      : def.workspaceLimit === 'apiTokens'
        ? "the workspace's API token limit"
        : "the workspace's quota";
  const out: Record<string, ResponseConfig> = {};
  for (const [status, tags] of byStatus) {
    const examples: Record<string, ExampleObject> = Object.fromEntries(
      tags.map((t) => [t, { summary: t === limitTag ? `${errorTitle(t)}: ${limitName}` : errorTitle(t), value: problemExample(t, def) }]),
    );
    // A quota refusal comes on top of the token's own bucket, which refuses with the same tag: both are shown.
    if (limitTag === 'RateLimited' && tags.includes('RateLimited')) {
      examples.RateLimitedPerToken = {
        summary: `${errorTitle('RateLimited')}: the token's \`${def.rateLimit}\` bucket`,
        value: tokenRateLimitedExample(def),
      };
    }
    out[String(status)] = {
      description: tags
        .map(
          (t) =>
            `\`${t}\`: ${errorTitle(t)}${t !== limitTag ? '' : limitTag === 'Conflict' ? ` (${limitName})` : ` (the token's \`${def.rateLimit}\` bucket or ${limitName})`}`,
        )
        .join('; '),
      content: { 'application/problem+json': { schema: ProblemSchema, examples } },
      headers: {
        'x-trace-id': headerRef(RESPONSE_HEADERS.problemTraceId),
        'cache-control': headerRef(RESPONSE_HEADERS.cacheControl),
        ...(status === 429 ? { 'retry-after': headerRef(RESPONSE_HEADERS.retryAfter) } : {}),
      },
    };
  }
  return out;
}

/** The `webhook-signature` of an example request: the dispatcher's signing module, with the example secret. */
function exampleSignature(
  body: string,
  webhookId: string = SIGNATURE_EXAMPLE.webhookId,
  timestamp: number = SIGNATURE_EXAMPLE.timestamp,
): string {
  return signatureHeader([SIGNATURE_EXAMPLE.secret], webhookId, timestamp, body);
}

/**
 * Signs the request headers of the attempt example (a component's example,
 * written in the contract with no signing at hand) over the delivery example's
 * body, so every signature the document shows verifies.
 */
function signAttemptExample(doc: OpenAPIObject): void {
  const schemas = doc.components?.schemas ?? {};
  const delivery = schemas.Delivery as SchemaObject | undefined;
  const attempt = schemas.DeliveryAttempt as SchemaObject | undefined;
  const d = delivery?.example as { deliveryId: string; eventType: string; payload: unknown } | undefined;
  const headers = (attempt?.example as { requestHeaders?: Record<string, string> } | undefined)?.requestHeaders;
  if (!d || !headers) throw new Error('The Delivery and DeliveryAttempt components need their examples');
  const body = JSON.stringify({ deliveryId: d.deliveryId, eventType: d.eventType, payload: d.payload });
  headers['webhook-signature'] = exampleSignature(body, headers['webhook-id'] ?? d.deliveryId, Number(headers['webhook-timestamp']));
}

/** A component name for an event type's payload: `order.shipped` → `OrderShippedPayload`. */
export function payloadComponentName(eventType: string): string {
  return `${eventType
    .split(/[._]/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('')}Payload`;
}

/**
 * A catalogue payload schema (a standalone JSON Schema) as a component of the
 * document: its own `$schema`/`$id` dropped and its local references
 * (`#/$defs/...`) re-pointed into the component.
 */
function payloadComponent(schema: Record<string, unknown>, name: string): SchemaObject {
  const base = `#/components/schemas/${name}`;
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (!node || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node).map(([k, v]) => [
        k,
        k === '$ref' && typeof v === 'string' && v.startsWith('#') ? `${base}${v.slice(1)}` : rewrite(v),
      ]),
    );
  };
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rewrite(rest) as SchemaObject;
}

/** The first example of a JSON Schema, when it declares one. */
function declaredExample(schema: Record<string, unknown>): unknown {
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0] as unknown;
  return schema.example;
}

function registerWebhook(registry: OpenAPIRegistry, type: EventTypeInfo): void {
  const component = payloadComponentName(type.name);
  registry.registerComponent('schemas', component, payloadComponent(type.payloadSchema, component));
  const payloadExample = declaredExample(type.payloadSchema);
  const body =
    payloadExample === undefined ? undefined : { deliveryId: SIGNATURE_EXAMPLE.webhookId, eventType: type.name, payload: payloadExample };
  const signature = body === undefined ? undefined : exampleSignature(JSON.stringify(body));
  const header = (description: string, example: string | undefined, schema: z.ZodString = z.string()) =>
    schema.meta({ description, ...(example === undefined ? {} : { example }) });
  registry.registerWebhook({
    method: 'post',
    path: type.name,
    operationId: `webhook_${type.name.replace(/[^a-zA-Z0-9]/g, '_')}`,
    summary: type.description === type.name ? `The ${type.name} event` : type.description,
    description: `${type.description}\n\nThe payload is described by the event type's JSON Schema (\`${component}\`), as \`GET /workspaces/{slug}/event-types\` lists it.\n\n${SIGNATURE_DOC}\n\n${DELIVERY_DOC}${body === undefined ? '' : `\n\n${EXAMPLES_DOC}`}`,
    // Untagged: Swagger UI lists webhooks in their own section, and would show a tag of theirs as an empty group.
    security: [{ [SECURITY_SCHEMES.webhookSignature]: [] }],
    request: {
      headers: z.object({
        'webhook-id': header(
          'The delivery id (`whd_…`), the same on every attempt of a delivery: deduplicate on it.',
          SIGNATURE_EXAMPLE.webhookId,
          DeliveryIdSchema,
        ),
        'webhook-timestamp': header(
          'Unix seconds at signing time, fresh on every attempt; reject values more than five minutes from your clock.',
          String(SIGNATURE_EXAMPLE.timestamp),
          z.string().regex(/^[0-9]+$/),
        ),
        'webhook-signature': header(
          'Space-separated `v1,<base64>` HMAC-SHA256 signatures of `<webhook-id>.<webhook-timestamp>.<raw body>`, newest secret first (two during a rotation grace window). Accept the request when any entry matches.',
          signature,
          z.string().regex(/^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$/),
        ),
        'x-trace-id': header(
          'Names this attempt; quote it in a support request. Recorded with the attempt evidence.',
          SIGNATURE_EXAMPLE.traceId,
        ),
        'user-agent': header('Identifies the sender.', SIGNATURE_EXAMPLE.userAgent),
      }),
      body: {
        required: true,
        description: 'The delivery: its id, its event type and the payload. Verify the signature over these exact bytes before parsing.',
        content: {
          'application/json': {
            schema: z.object({
              deliveryId: DeliveryIdSchema.meta({ description: 'The delivery id; equals the `webhook-id` header.' }),
              eventType: z.literal(type.name),
              payload: z.unknown(),
            }),
            ...(body === undefined ? {} : { example: body }),
          },
        },
      },
    },
    responses: {
      '2XX': {
        description: `Accepted: the delivery is done. The response body is ignored (its first ${SEND_LIMITS.bodyCapBytes / 1024} KiB are kept as evidence).`,
      },
      default: {
        description:
          'Any other answer fails the attempt: 5xx, 408 and 429 (and timeouts or network errors) are retried; other 4xx and 3xx fail the delivery permanently.',
      },
    },
  });
}

type SchemaOrRef = SchemaObject | ReferenceObject;

/**
 * An example value for a schema of the document: the schema's own example, else
 * one composed from its properties' examples. Undefined when a required string
 * has no example (nothing is invented).
 */
function exampleOf(schema: SchemaOrRef | undefined, components: Record<string, SchemaOrRef>, depth = 0): unknown {
  if (!schema || depth > 10) return undefined;
  if (isReferenceObject(schema)) return exampleOf(components[schema.$ref.replace('#/components/schemas/', '')], components, depth + 1);
  if (schema.example !== undefined) return schema.example as unknown;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0] as unknown;
  if (schema.const !== undefined) return schema.const as unknown;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0] as unknown;
  if (schema.default !== undefined) return schema.default as unknown;
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.includes('object') || schema.properties) {
    const out: Record<string, unknown> = {};
    for (const [key, sub] of Object.entries(schema.properties ?? {})) {
      const value = exampleOf(sub, components, depth + 1);
      if (value !== undefined) out[key] = value;
      else if (schema.required?.includes(key)) return undefined;
    }
    return out;
  }
  if (types.includes('array')) {
    const item = exampleOf(schema.items, components, depth + 1);
    return item === undefined ? undefined : [item];
  }
  if (types.includes('null')) return null;
  if (types.includes('boolean')) return true;
  if (types.includes('integer') || types.includes('number')) return schema.minimum ?? 0;
  return undefined;
}

/** Gives every request and response body of the operations an example, from the schemas' examples. */
function addBodyExamples(doc: OpenAPIObject): void {
  const components = doc.components?.schemas ?? {};
  for (const item of Object.values<PathItemObject>(doc.paths ?? {})) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const op = item[method];
      if (!op) continue;
      const bodies: (RequestBodyObject | ResponseObject | ReferenceObject | undefined)[] = [
        op.requestBody,
        ...Object.values<ResponseObject | ReferenceObject>(op.responses ?? {}),
      ];
      for (const body of bodies) {
        if (!body || isReferenceObject(body)) continue;
        for (const media of Object.values<MediaTypeObject>(body.content ?? {})) {
          if (media.example !== undefined || media.examples !== undefined) continue;
          const example = exampleOf(media.schema, components);
          // A copy: the document is JSON, not a graph of shared objects.
          if (example !== undefined) media.example = structuredClone(example);
        }
      }
    }
  }
}

/**
 * Points each webhook's `payload` at its event type's payload schema, and
 * requires it; moves the header examples up to the parameters, where
 * reference UIs show them.
 */
function linkWebhookPayloads(doc: OpenAPIObject, eventTypes: readonly EventTypeInfo[]): void {
  for (const type of eventTypes) {
    for (const param of (doc.webhooks?.[type.name]?.post?.parameters ?? []) as ParameterObject[]) {
      const schema = param.schema as SchemaObject | undefined;
      if (schema?.example === undefined) continue;
      param.example = schema.example as unknown;
      delete schema.example;
    }
    const media = doc.webhooks?.[type.name]?.post?.requestBody;
    const schema = media && !('$ref' in media) ? (media.content['application/json']?.schema as SchemaObject | undefined) : undefined;
    if (!schema?.properties) throw new Error(`webhook ${type.name}: no request body schema`);
    schema.properties.payload = { $ref: `#/components/schemas/${payloadComponentName(type.name)}` };
    schema.required = [...new Set([...(schema.required ?? []), 'payload'])];
  }
}

/** Builds the OpenAPI 3.1 document of the whole contract. */
export function buildOpenApiDocument(options: OpenApiOptions): OpenAPIObject {
  const registry = new OpenAPIRegistry();
  const bearer = registry.registerComponent('securitySchemes', SECURITY_SCHEMES.bearer, {
    type: 'http',
    scheme: 'bearer',
    description: 'A workspace API token: `Authorization: Bearer <token>`. Cookies are not accepted.',
  });
  const sigv4 = registry.registerComponent('securitySchemes', SECURITY_SCHEMES.sigv4, {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description:
      "AWS Signature Version 4 (service `execute-api`, the stack's region), as the AWS SDK signs (`@smithy/signature-v4`): the platform API, for the platform's own backend. Only the IAM principals of the stage setting `platformPrincipals` are allowed; the signature covers the body (`x-amz-content-sha256`, never `UNSIGNED-PAYLOAD`) and is valid for 15 minutes.",
  });
  registry.registerComponent('securitySchemes', SECURITY_SCHEMES.webhookSignature, {
    type: 'apiKey',
    in: 'header',
    name: 'webhook-signature',
    description: `How receivers authenticate the service's webhook requests (nothing to enter to call the API). ${SIGNATURE_DOC}`,
  });

  registerResponseHeaders(registry);
  for (const def of OPERATIONS as readonly OperationDef[]) {
    const success =
      def.successStatus === 204 || !def.response
        ? { description: 'Done; no content (and no `content-type`).' }
        : { description: def.summary, content: { 'application/json': { schema: def.response } } };
    // An idempotent operation (docs/behaviour.md#idempotency-keys): the optional key, and the header of a replayed answer.
    const replayed = {
      headers: successHeaders(
        def.idempotent
          ? {
              [IDEMPOTENT_REPLAYED_HEADER]: {
                description: `\`true\` when this is the stored answer of an earlier request with the same \`${IDEMPOTENCY_KEY_HEADER}\` (nothing was done again); absent otherwise.`,
                schema: { type: 'string' as const, enum: ['true'] },
              },
            }
          : {},
      ),
    };
    registry.registerPath({
      operationId: def.operationId,
      method: def.method.toLowerCase() as 'get' | 'post' | 'patch' | 'delete',
      path: def.path,
      summary: def.summary,
      description: `${def.description}\n\n${callerNote(def)}`,
      tags: [def.tag],
      security: { token: [{ [bearer.name]: [] }], iam: [{ [sigv4.name]: [] }], public: [] }[routeKind(def)],
      request: {
        params: def.params,
        ...(def.query ? { query: def.query } : {}),
        ...(def.idempotent ? { headers: z.object({ [IDEMPOTENCY_KEY_HEADER]: IdempotencyKeySchema.optional() }) } : {}),
        ...(def.body ? { body: { required: true, content: { 'application/json': { schema: def.body } } } } : {}),
      },
      responses: {
        [String(def.successStatus)]: { ...success, ...replayed },
        ...(def.dryRun
          ? {
              [String(def.dryRun.successStatus)]: {
                description: 'Dry run (`dryRun: true`): the count only; nothing is changed.',
                content: { 'application/json': { schema: def.dryRun.response } },
                ...replayed,
              },
            }
          : {}),
        ...errorResponses(def),
      },
    });
  }

  const names = new Set<string>();
  for (const type of options.eventTypes) {
    const component = payloadComponentName(type.name);
    if (names.has(component)) throw new Error(`event types ${type.name}: payload component ${component} is taken`);
    names.add(component);
    registerWebhook(registry, type);
  }

  const generator = new OpenApiGeneratorV31(registry.definitions);
  const doc = generator.generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Webhook delivery service',
      version: options.version ?? '1.0.0',
      description: [
        `Workspace-scoped REST API of the outbound webhook delivery service. Every list is a Page (\`items\`, \`nextCursor\`) with \`limit\` (default ${PAGE_LIMIT.default}, clamped into [${PAGE_LIMIT.min}, ${PAGE_LIMIT.max}]) and an opaque \`cursor\`. Errors are \`application/problem+json\` (RFC 9457) with a \`tag\` and a \`traceId\`; the tags are an open set: accept ones you do not know, by their HTTP status. Every answer carries \`cache-control: no-store\` and the request's \`x-trace-id\`; a 204 has no body and no \`content-type\`.`,
        '## Receiving webhooks',
        `The event types an endpoint can subscribe to are listed under **Webhooks**, each with its payload schema. ${SIGNATURE_DOC}`,
        DELIVERY_DOC,
      ].join('\n\n'),
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: options.serverUrl ?? '/', description: 'This API (the host that serves this document).' }],
    tags: [
      { name: 'Webhooks', description: 'Webhook endpoints: create, update, rotate secrets.' },
      { name: 'Deliveries', description: 'Delivery summaries, attempt evidence, replays and test sends.' },
      { name: 'Events', description: 'The event-type catalogue.' },
      { name: 'Workspace', description: 'Workspace overview, members, audit trail, notifications.' },
      { name: 'API tokens', description: 'Workspace API tokens.' },
      { name: 'Portal', description: "Portal sessions (links that open the console for a customer's people) and the console's branding." },
      ...((OPERATIONS as readonly OperationDef[]).some((d) => d.tag === PLATFORM_TAG)
        ? [
            {
              name: PLATFORM_TAG,
              description: "The platform API: the workspace lifecycle, for the platform's own backend, on AWS IAM (SigV4).",
            },
          ]
        : []),
    ],
  });
  declareUrlRule(doc, options.loopbackHttp ?? false);
  linkWebhookPayloads(doc, options.eventTypes);
  signAttemptExample(doc);
  addBodyExamples(doc);
  return doc;
}
