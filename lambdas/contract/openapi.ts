/**
 * The OpenAPI 3.1 document, generated from the contract (spec §9). Pure: CDK
 * calls it at synth and writes the result; the local server calls it at start.
 */
import { OpenAPIRegistry, OpenApiGeneratorV31, type ResponseConfig } from '@asteasolutions/zod-to-openapi';
import type { OpenAPIObject } from 'openapi3-ts/oas31';
import { z } from 'zod';
import { ERROR_STATUS, ProblemSchema, errorTitle, type ErrorTag } from './errors';
import { type EventTypeInfo } from './events';
import { OPERATIONS, declaredErrors, type OperationDef } from './operations';

/** Options of {@link buildOpenApiDocument}. */
export interface OpenApiOptions {
  /** Base URL of the API, when known. */
  readonly serverUrl?: string;
  /** The event-type catalogue, listed under `webhooks`. */
  readonly eventTypes: readonly EventTypeInfo[];
  /** Document version. @default '1.0.0' */
  readonly version?: string;
}

const SIGNATURE_DOC = [
  'Each delivery is an HTTP POST with a JSON body of exactly `{deliveryId, eventType, payload}` and the',
  '[Standard Webhooks](https://www.standardwebhooks.com/) headers `webhook-id` (the delivery id),',
  '`webhook-timestamp` (Unix seconds, fresh on every attempt) and `webhook-signature`: space-separated',
  '`v1,<base64>` entries, newest secret first (two entries during a 24-hour rotation grace window).',
  'The signature is HMAC-SHA256 keyed with the base64-decoded part of the `whsec_` secret over',
  '`<webhook-id>.<webhook-timestamp>.<raw body>`. Verify the raw body before parsing, accept any',
  'matching `v1` entry, reject timestamps more than five minutes from your clock, and deduplicate',
  'on `webhook-id`: delivery is at least once. `x-trace-id` names the attempt for support.',
].join(' ');

function statusOfTag(tag: ErrorTag): number {
  return ERROR_STATUS[tag];
}

function errorResponses(def: OperationDef) {
  const byStatus = new Map<number, ErrorTag[]>();
  for (const tag of declaredErrors(def)) {
    const status = statusOfTag(tag);
    byStatus.set(status, [...(byStatus.get(status) ?? []), tag]);
  }
  const out: Record<string, ResponseConfig> = {};
  for (const [status, tags] of byStatus) {
    out[String(status)] = {
      description: tags.map((t) => `\`${t}\`: ${errorTitle(t)}`).join('; '),
      content: { 'application/problem+json': { schema: ProblemSchema } },
      ...(status === 429
        ? { headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' as const } } } }
        : {}),
    };
  }
  return out;
}

/** Builds the OpenAPI 3.1 document of the whole contract. */
export function buildOpenApiDocument(options: OpenApiOptions): OpenAPIObject {
  const registry = new OpenAPIRegistry();
  const bearer = registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'A workspace API token: `Authorization: Bearer <token>`. Cookies are not accepted.',
  });

  for (const def of OPERATIONS as readonly OperationDef[]) {
    const success =
      def.successStatus === 204 || !def.response
        ? { description: 'Done; no content.' }
        : { description: def.summary, content: { 'application/json': { schema: def.response } } };
    registry.registerPath({
      operationId: def.operationId,
      method: def.method.toLowerCase() as 'get' | 'post' | 'patch' | 'delete',
      path: def.path,
      summary: def.summary,
      description: def.permission
        ? `${def.description}\n\nRequires permission \`${def.permission}\`. Rate-limit bucket \`${def.rateLimit}\`. MCP tool \`${def.mcpTool}\`.`
        : `${def.description}\n\nAny token of the workspace may call it. Rate-limit bucket \`${def.rateLimit}\`. MCP tool \`${def.mcpTool}\`.`,
      tags: [def.tag],
      security: [{ [bearer.name]: [] }],
      request: {
        params: def.params,
        ...(def.query ? { query: def.query } : {}),
        ...(def.body ? { body: { required: true, content: { 'application/json': { schema: def.body } } } } : {}),
      },
      responses: { [String(def.successStatus)]: success, ...errorResponses(def) },
    });
  }

  for (const type of options.eventTypes) {
    registry.registerWebhook({
      method: 'post',
      path: type.name,
      operationId: `webhook_${type.name.replace(/[^a-zA-Z0-9]/g, '_')}`,
      summary: type.name,
      description: `${type.description}\n\n${SIGNATURE_DOC}`,
      tags: ['Webhook events'],
      request: {
        headers: z.object({
          'webhook-id': z.string().meta({ description: 'The delivery id (`whd_…`); dedupe on it.' }),
          'webhook-timestamp': z.string().meta({ description: 'Unix seconds at signing time.' }),
          'webhook-signature': z.string().meta({ description: 'Space-separated `v1,<base64>` signatures, current key first.' }),
          'x-trace-id': z.string().meta({ description: 'Trace id to quote in a support request.' }),
        }),
        body: {
          required: true,
          content: {
            'application/json': {
              schema: z.object({
                deliveryId: z.string(),
                eventType: z.literal(type.name),
                payload: z.unknown().meta({ description: 'Payload; see the JSON Schema in the event-type catalogue.' }),
              }),
            },
          },
        },
      },
      responses: { '2XX': { description: 'Accepted. Any other status is retried (5xx, 408, 429) or permanent (other 4xx, 3xx).' } },
    });
  }

  const generator = new OpenApiGeneratorV31(registry.definitions);
  return generator.generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Webhook delivery service',
      version: options.version ?? '1.0.0',
      description: `Workspace-scoped REST API of the outbound webhook delivery service. Every list is a Page (\`items\`, \`nextCursor\`) with \`limit\` (default 50, clamped into [1, 200]) and an opaque \`cursor\`. Errors are \`application/problem+json\` with a \`tag\` and a \`traceId\`.\n\n${SIGNATURE_DOC}`,
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: options.serverUrl ?? '/' }],
    tags: [
      { name: 'Webhooks', description: 'Webhook endpoints: create, update, rotate secrets.' },
      { name: 'Deliveries', description: 'Delivery summaries, attempt evidence, replays and test sends.' },
      { name: 'Events', description: 'The event-type catalogue.' },
      { name: 'Workspace', description: 'Workspace overview, members, audit trail, notifications.' },
      { name: 'API tokens', description: 'Workspace API tokens.' },
      { name: 'Webhook events', description: 'What receivers get.' },
    ],
  });
}
