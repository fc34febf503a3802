import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ERROR_STATUS, ProblemSchema } from '../../../lambdas/contract/errors';
import { builtInCatalogue } from '../../../lambdas/contract/events';
import { SIGNATURE_EXAMPLE, buildOpenApiDocument, payloadComponentName, problemExample } from '../../../lib/docs/openapi-document';
import { declaredErrors, OPERATIONS, routeKind, TOKEN_OPERATIONS, type OperationDef } from '../../../lambdas/contract/operations';
import { workspaceLimitRefusal } from '../../../lambdas/contract/rate-limits';
import { createEventCatalogue } from '../../../lambdas/domain/event-catalogue';
import { deploymentCatalogue } from '../../../lambdas/domain/configured-event-types';
import { signOne } from '../../../lambdas/domain/signing';
import { MAX_RETRIES, RETRY_DELAY_SECONDS } from '../../../lambdas/domain/backoff';
import { DISABLE_THRESHOLD } from '../../../lambdas/domain/delivery-lifecycle';
import { DEFAULT_WORKSPACE_LIMITS, SEND_LIMITS, USER_AGENT } from '../../../lambdas/contract/limits';
import { PAGE_LIMIT, clampLimit } from '../../../lambdas/contract/pagination';
import { DELIVERY_STATUSES } from '../../../lambdas/contract/delivery-statuses';
import { JOB_STATUSES } from '../../../lambdas/contract/jobs';
import { ISO_INSTANT_OR_DATE } from '../../../lambdas/contract/input-rules';

const doc = buildOpenApiDocument({ eventTypes: builtInCatalogue() }) as any;
const deployment = deploymentCatalogue();
const deployed = buildOpenApiDocument({ eventTypes: deployment.types }) as any;

const DELIVERY_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'x-trace-id', 'user-agent'];

afterEach(() => {
  vi.useRealTimers();
});

describe('the OpenAPI document generated from the contract', () => {
  it('is OpenAPI 3.1 with bearer security, and a signature scheme for webhooks', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.webhookSignature).toMatchObject({ type: 'apiKey', in: 'header', name: 'webhook-signature' });
    expect(doc.components.securitySchemes.webhookSignature.description).toContain('HMAC-SHA256');
    expect(doc.info.license).toEqual({ name: 'Apache-2.0', identifier: 'Apache-2.0' });
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    for (const tag of doc.tags) expect(tag.description, tag.name).toBeTruthy();
  });

  it.each(OPERATIONS.map((o) => [o.operationId, o] as const))('declares %s with its path, status, errors and security', (_id, op) => {
    const entry = doc.paths[op.path][op.method.toLowerCase()];
    expect(entry.operationId).toBe(op.operationId);
    expect(entry.summary).toBe(op.summary);
    expect(entry.description).toContain(op.description);
    expect(entry.tags).toEqual([op.tag]);
    // Per route kind (docs/architecture.md#route-kinds): a workspace token, a SigV4 signature, or nothing.
    const kind = routeKind(op as OperationDef);
    expect(entry.security).toEqual({ token: [{ bearerAuth: [] }], iam: [{ sigv4: [] }], public: [] }[kind]);
    if (kind === 'iam') expect(entry.tags).toEqual(['Platform']);
    expect(Object.keys(entry.responses)).toContain(String(op.successStatus));
    for (const tag of declaredErrors(op)) {
      expect(entry.responses[String(ERROR_STATUS[tag])].content['application/problem+json'].schema.$ref).toBe(
        '#/components/schemas/Problem',
      );
    }
  });

  it.each((OPERATIONS as readonly OperationDef[]).map((o) => [o.operationId, o] as const))(
    'gives %s examples that the contract itself accepts',
    (_id, op) => {
      const entry = doc.paths[op.path][op.method.toLowerCase()];
      if (op.body) {
        const example = entry.requestBody.content['application/json'].example;
        expect(example, 'request body example').toBeDefined();
        expect(op.body.safeParse(example).error).toBeUndefined();
      } else {
        expect(entry.requestBody).toBeUndefined();
      }
      if (op.response) {
        const example = entry.responses[String(op.successStatus)].content['application/json'].example;
        expect(example, 'response example').toBeDefined();
        expect(op.response.safeParse(example).error).toBeUndefined();
      }
      for (const tag of declaredErrors(op)) {
        const examples = entry.responses[String(ERROR_STATUS[tag])].content['application/problem+json'].examples;
        expect(examples[tag].value).toEqual(problemExample(tag, op));
        expect(examples[tag].value).toMatchObject({ tag, status: ERROR_STATUS[tag], type: `urn:problem:webhooks:${tag}` });
        expect(ProblemSchema.safeParse(examples[tag].value).error).toBeUndefined();
      }
    },
  );

  it('subscribes the example endpoint to catalogue types only', () => {
    const create = doc.paths['/workspaces/{slug}/webhooks'].post.requestBody.content['application/json'].example;
    expect(create.eventTypes.length).toBeGreaterThan(0);
    for (const type of create.eventTypes) expect(deployment.has(type), type).toBe(true);
  });

  it('declares exactly WorkspaceNotFound, InternalError, Unauthorized, RateLimited on the overview (docs/behaviour.md#declared-errors)', () => {
    const overview = OPERATIONS.find((o) => o.operationId === 'getWorkspaceOverview')!;
    expect(declaredErrors(overview).sort()).toEqual(['InternalError', 'RateLimited', 'Unauthorized', 'WorkspaceNotFound']);
    expect(Object.keys(doc.paths['/workspaces/{slug}/overview'].get.responses).sort()).toEqual(['200', '401', '404', '429', '500']);
  });

  describe('the workspace limits (docs/behaviour.md#workspace-limits)', () => {
    const operation = (id: string) => {
      const def = (OPERATIONS as readonly OperationDef[]).find((o) => o.operationId === id)!;
      return doc.paths[def.path][def.method.toLowerCase()];
    };
    const problems = (id: string, status: number) => operation(id).responses[String(status)].content['application/problem+json'].examples;
    const { endpoints, apiTokens, testSendsPerMinute, replaysPerMinute } = DEFAULT_WORKSPACE_LIMITS;

    it('words each refusal as the operations do (the exact details test/operations/workspace-limits.test.ts gets)', () => {
      const two = { testSendsPerMinute: 3, replaysPerMinute: 2, endpoints: 2, apiTokens: 2 };
      expect(workspaceLimitRefusal('endpoints', two)).toBe(
        'This workspace has 2 webhook endpoints, the most it may have; delete one first',
      );
      expect(workspaceLimitRefusal('apiTokens', two)).toBe('This workspace has 2 API tokens, the most it may have; revoke one first');
      expect(workspaceLimitRefusal('testSendsPerMinute', two, 55)).toBe(
        "This workspace's quota of 3 test sends per minute, shared by all its tokens, is used up; retry after 55 s",
      );
      expect(workspaceLimitRefusal('replaysPerMinute', two, 7)).toBe(
        "This workspace's quota of 2 replays per minute, shared by all its tokens, is used up; retry after 7 s",
      );
      const one = { testSendsPerMinute: 1, replaysPerMinute: 1, endpoints: 1, apiTokens: 1 };
      expect(workspaceLimitRefusal('endpoints', one)).toBe('This workspace has 1 webhook endpoint, the most it may have; delete one first');
      expect(workspaceLimitRefusal('apiTokens', one)).toBe('This workspace has 1 API token, the most it may have; revoke one first');
      expect(workspaceLimitRefusal('testSendsPerMinute', one, 5)).toBe(
        "This workspace's quota of 1 test send per minute, shared by all its tokens, is used up; retry after 5 s",
      );
    });

    it("gives creating an endpoint or a token the workspace's count limit as its 409 example and in its description", () => {
      expect(problems('createWebhook', 409).Conflict.value.detail).toBe(
        `This workspace has ${endpoints} webhook endpoints, the most it may have; delete one first`,
      );
      expect(problems('createApiToken', 409).Conflict.value.detail).toBe(
        `This workspace has ${apiTokens} API tokens, the most it may have; revoke one first`,
      );
      expect(operation('createWebhook').description).toContain(
        `A workspace may have ${endpoints} webhook endpoints by default (setting \`workspaceLimits.endpoints\`): past it, 409 \`Conflict\``,
      );
      expect(operation('createApiToken').description).toContain(
        `A workspace may have ${apiTokens} API tokens by default (setting \`workspaceLimits.apiTokens\`): past it, 409 \`Conflict\``,
      );
      expect(operation('createWebhook').responses['409'].description).toContain("the workspace's endpoint limit");
      // The concurrent-rotation conflict stays the rotation's.
      expect(problems('rotateWebhookSecret', 409).Conflict.value.detail).toMatch(/Another rotation of this secret/);
      for (const id of ['createWebhook', 'createApiToken']) expect(JSON.stringify(problems(id, 409))).not.toMatch(/rotation/);
    });

    it("gives test sends and replays the workspace's quota as their 429 example, beside the token's bucket, and in their description", () => {
      const send = problems('sendWebhookTestEvent', 429);
      expect(Object.keys(send)).toEqual(['RateLimited', 'RateLimitedPerToken']);
      expect(send.RateLimited.value.detail).toBe(
        `This workspace's quota of ${testSendsPerMinute} test sends per minute, shared by all its tokens, is used up; retry after 12 s`,
      );
      expect(send.RateLimitedPerToken.value.detail).toBe('Too many rest_write requests for this token; retry after 12 s');
      expect(problems('replayWebhookDelivery', 429).RateLimited.value.detail).toBe(
        `This workspace's quota of ${replaysPerMinute} replays per minute, shared by all its tokens, is used up; retry after 12 s`,
      );
      expect(operation('sendWebhookTestEvent').description).toContain(
        `a quota of ${testSendsPerMinute} test sends per minute by default (setting \`workspaceLimits.testSendsPerMinute\`)`,
      );
      expect(operation('replayWebhookDelivery').description).toContain(
        `a quota of ${replaysPerMinute} replays per minute by default (setting \`workspaceLimits.replaysPerMinute\`)`,
      );
      expect(operation('sendWebhookTestEvent').responses['429'].description).toContain("the workspace's quota");
    });

    it("names each operation's own bucket in the token's 429 example", () => {
      expect(problems('listWebhooks', 429).RateLimited.value.detail).toBe('Too many rest_read requests for this token; retry after 12 s');
    });
  });

  it('lists the event catalogue under webhooks', () => {
    expect(Object.keys(doc.webhooks)).toEqual(builtInCatalogue().map((t) => t.name));
    expect(doc.webhooks['webhook.test_event'].post.requestBody.content['application/json'].schema.properties.eventType).toEqual({
      type: 'string',
      enum: ['webhook.test_event'],
    });
  });

  it('has unique operation ids and MCP tool names', () => {
    expect(new Set(OPERATIONS.map((o) => o.operationId)).size).toBe(OPERATIONS.length);
    expect(new Set(TOKEN_OPERATIONS.map((o) => o.mcpTool)).size).toBe(TOKEN_OPERATIONS.length);
    // Only token routes are MCP tools (docs/architecture.md#route-kinds).
    expect(TOKEN_OPERATIONS.every((o) => o.mcpTool)).toBe(true);
    expect((OPERATIONS as readonly OperationDef[]).filter((o) => o.auth && o.auth !== 'token' && o.mcpTool)).toEqual([]);
  });
});

describe('the webhooks of the deployment catalogue', () => {
  it('lists every catalogue type, configured ones included', () => {
    expect(Object.keys(deployed.webhooks)).toEqual(deployment.types.map((t) => t.name));
    expect(deployment.types.some((t) => !t.builtIn)).toBe(true);
  });

  it.each(deployment.types.map((t) => [t.name, t] as const))(
    'describes %s: payload schema, delivery headers, signature scheme',
    (name, type) => {
      const hook = deployed.webhooks[name].post;
      expect(hook.operationId).toBe(`webhook_${name.replace(/[^a-zA-Z0-9]/g, '_')}`);
      expect(hook.summary).toBeTruthy();
      expect(hook.description).toContain(type.description);
      expect(hook.description).toContain('HMAC-SHA256');
      expect(hook.description).toContain('`<webhook-id>.<webhook-timestamp>.<raw body>`');
      expect(hook.security).toEqual([{ webhookSignature: [] }]);
      expect(hook.parameters.map((p: any) => [p.in, p.name, p.required])).toEqual(DELIVERY_HEADERS.map((h) => ['header', h, true]));
      for (const p of hook.parameters) expect(p.description, p.name).toBeTruthy();

      const body = hook.requestBody.content['application/json'].schema;
      expect(hook.requestBody.required).toBe(true);
      expect(body.required).toEqual(['deliveryId', 'eventType', 'payload']);
      expect(body.properties.eventType).toEqual({ type: 'string', enum: [name] });
      expect(body.properties.payload).toEqual({ $ref: `#/components/schemas/${payloadComponentName(name)}` });
      // The catalogue's JSON Schema, as GET /event-types serves it, less its own `$schema`.
      const { $schema: _, ...payloadSchema } = type.payloadSchema;
      expect(deployed.components.schemas[payloadComponentName(name)]).toEqual(payloadSchema);
      expect(Object.keys(hook.responses).sort()).toEqual(['2XX', 'default']);
    },
  );

  it.each(builtInCatalogue().map((t) => [t.name] as const))(
    'signs the %s example as the dispatcher would, and standardwebhooks verifies it',
    (name) => {
      const hook = deployed.webhooks[name].post;
      const body = hook.requestBody.content['application/json'].example;
      expect(body).toMatchObject({ deliveryId: SIGNATURE_EXAMPLE.webhookId, eventType: name });
      expect(deployment.validate(name, body.payload)).toEqual([]);
      const headers = Object.fromEntries(hook.parameters.map((p: any) => [p.name, p.example]));
      expect(headers['user-agent']).toBe(USER_AGENT);
      expect(headers['webhook-id']).toBe(body.deliveryId);
      const raw = JSON.stringify(body);
      expect(headers['webhook-signature']).toBe(
        signOne(SIGNATURE_EXAMPLE.secret, SIGNATURE_EXAMPLE.webhookId, SIGNATURE_EXAMPLE.timestamp, raw),
      );
      vi.useFakeTimers({ now: SIGNATURE_EXAMPLE.timestamp * 1000 });
      expect(new Webhook(SIGNATURE_EXAMPLE.secret).verify(raw, headers)).toEqual(body);
    },
  );

  it("signs the attempt example's request over the delivery example's body, and standardwebhooks verifies it", () => {
    const delivery = deployed.components.schemas.Delivery.example;
    const headers = deployed.components.schemas.DeliveryAttempt.example.requestHeaders;
    const raw = JSON.stringify({ deliveryId: delivery.deliveryId, eventType: delivery.eventType, payload: delivery.payload });
    expect(headers['webhook-id']).toBe(delivery.deliveryId);
    expect(headers['user-agent']).toBe(USER_AGENT);
    expect(headers['webhook-signature']).toBe(
      signOne(SIGNATURE_EXAMPLE.secret, delivery.deliveryId, Number(headers['webhook-timestamp']), raw),
    );
    vi.useFakeTimers({ now: Number(headers['webhook-timestamp']) * 1000 });
    expect(new Webhook(SIGNATURE_EXAMPLE.secret).verify(raw, headers)).toMatchObject({ deliveryId: delivery.deliveryId });
  });

  it('states the delivery rules the dispatcher really applies', () => {
    const text = deployed.webhooks['webhook.test_event'].post.description;
    expect(deployed.info.description).toContain('## Receiving webhooks');
    for (const doc of [text, deployed.info.description]) {
      expect(doc).toContain(
        `${RETRY_DELAY_SECONDS} s × attempt, at most ${(MAX_RETRIES * RETRY_DELAY_SECONDS) / 60} minutes apart, ${MAX_RETRIES} retries`,
      );
      expect(doc).toContain(`Answer 2xx within ${SEND_LIMITS.deadlineMs / 1000} seconds`);
      expect(doc).toContain(`user-agent: ${USER_AGENT}`);
      expect(DISABLE_THRESHOLD).toBe(20);
      expect(doc).toContain(`${DISABLE_THRESHOLD} consecutive failures disable the endpoint`);
    }
    expect(deployed.webhooks['webhook.test_event'].post.responses['2XX'].description).toContain(
      `first ${SEND_LIMITS.bodyCapBytes / 1024} KiB`,
    );
  });

  it('gives a configured type without examples no invented example', () => {
    const configured = deployment.types.find((t) => !t.builtIn)!;
    const hook = deployed.webhooks[configured.name].post;
    expect(hook.requestBody.content['application/json'].example).toBeUndefined();
    expect(hook.parameters.find((p: any) => p.name === 'webhook-signature').example).toBeUndefined();
  });

  it('keeps a configured schema with local references resolvable in the document', () => {
    const catalogue = createEventCatalogue([
      {
        name: 'invoice.paid',
        payloadSchema: {
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          $id: 'https://schemas.acme.test/invoice-paid.json',
          type: 'object',
          properties: { amount: { $ref: '#/$defs/money' }, lines: { type: 'array', items: { $ref: '#' } } },
          $defs: { money: { type: 'integer' } },
        },
      },
    ]);
    const built = buildOpenApiDocument({ eventTypes: catalogue.types }) as any;
    expect(built.components.schemas.InvoicePaidPayload).toEqual({
      type: 'object',
      properties: {
        amount: { $ref: '#/components/schemas/InvoicePaidPayload/$defs/money' },
        lines: { type: 'array', items: { $ref: '#/components/schemas/InvoicePaidPayload' } },
      },
      $defs: { money: { type: 'integer' } },
    });
  });

  it('refuses two event types whose payload components would collide', () => {
    const catalogue = createEventCatalogue([
      { name: 'order.shipped_late', payloadSchema: { type: 'object' } },
      { name: 'order_shipped.late', payloadSchema: { type: 'object' } },
    ]);
    expect(() => buildOpenApiDocument({ eventTypes: catalogue.types })).toThrow(/OrderShippedLatePayload is taken/);
  });
});

/** Every operation's declared responses, as `[operationId, status, response]`. */
const responses = (OPERATIONS as readonly OperationDef[]).flatMap((op) =>
  Object.entries<any>(doc.paths[op.path][op.method.toLowerCase()].responses).map(([status, r]) => [op.operationId, status, r] as const),
);

describe('what the document declares beyond the bodies (docs/behaviour.md#errors)', () => {
  it('defines x-trace-id, cache-control and Retry-After once, as header components', () => {
    expect(doc.components.headers.TraceId).toMatchObject({ required: true, schema: { type: 'string' } });
    expect(doc.components.headers.ProblemTraceId.schema).toMatchObject({ type: 'string' });
    expect(doc.components.headers.ProblemTraceId.description).toMatch(/API Gateway/);
    expect(doc.components.headers.CacheControl).toMatchObject({ required: true, schema: { type: 'string', enum: ['no-store'] } });
    expect(doc.components.headers.RetryAfter).toMatchObject({ required: true, schema: { type: 'integer', minimum: 1 } });
  });

  it.each(responses)('%s %s declares x-trace-id and cache-control (and Retry-After on a 429)', (_id, status, response) => {
    const problem = Number(status) >= 400;
    expect(response.headers['x-trace-id']).toEqual({ $ref: `#/components/headers/${problem ? 'ProblemTraceId' : 'TraceId'}` });
    expect(response.headers['cache-control']).toEqual({ $ref: '#/components/headers/CacheControl' });
    if (status === '429') expect(response.headers['retry-after']).toEqual({ $ref: '#/components/headers/RetryAfter' });
    else expect(response.headers['retry-after']).toBeUndefined();
  });

  it('declares no content, so no content type, on every 204', () => {
    const noContent = responses.filter(([, status]) => status === '204');
    expect(noContent.map(([id]) => id)).toEqual(expect.arrayContaining(['deleteWebhook', 'revokeApiToken']));
    for (const [, , response] of noContent) expect(response.content).toBeUndefined();
  });

  it('lets every list take any integer limit, and says it is clamped', () => {
    const lists = (OPERATIONS as readonly OperationDef[]).filter((op) => op.query && 'limit' in (op.query as any).shape);
    expect(lists.length).toBeGreaterThan(5);
    for (const op of lists) {
      const limit = doc.paths[op.path][op.method.toLowerCase()].parameters.find((p: any) => p.name === 'limit');
      expect(limit.schema, op.operationId).toEqual({ type: 'integer', default: PAGE_LIMIT.default });
      expect(limit.description).toContain(`clamped into [${PAGE_LIMIT.min}, ${PAGE_LIMIT.max}]`);
      // What the server does with the values a generated client can now send.
      expect([0, -3, 10_000].map(clampLimit)).toEqual([PAGE_LIMIT.min, PAGE_LIMIT.min, PAGE_LIMIT.max]);
    }
  });

  it('declares the delivery log status filter as a comma-separated list of the statuses', () => {
    const status = doc.paths['/workspaces/{slug}/deliveries'].get.parameters.find((p: any) => p.name === 'status');
    expect(status).toMatchObject({
      in: 'query',
      style: 'form',
      explode: false,
      schema: { type: 'array', minItems: 1, items: { type: 'string', enum: [...DELIVERY_STATUSES] } },
    });
  });

  it('declares the jobs list status filter as a comma-separated list of the job statuses', () => {
    const status = doc.paths['/workspaces/{slug}/jobs'].get.parameters.find((p: any) => p.name === 'status');
    expect(status).toMatchObject({
      in: 'query',
      style: 'form',
      explode: false,
      schema: { type: 'array', minItems: 1, items: { type: 'string', enum: [...JOB_STATUSES] } },
    });
  });

  it('declares since and until with the exact pattern the server checks', () => {
    const params = doc.paths['/workspaces/{slug}/deliveries'].get.parameters;
    for (const name of ['since', 'until']) {
      const schema = params.find((p: any) => p.name === name).schema;
      expect(schema.pattern).toBe(ISO_INSTANT_OR_DATE.source);
      const pattern = new RegExp(schema.pattern, 'u');
      for (const ok of ['2026-11-25', '2026-11-25T12:00:00Z', '2026-11-25T12:00:00.123+02:00', '2024-02-29T00:00:00Z'])
        expect(pattern.test(ok), ok).toBe(true);
      for (const bad of ['2026-11-25T12:00:00', '2026-11-25 12:00:00Z', '2026-02-30', '2026-11-25t12:00:00z', 'yesterday'])
        expect(pattern.test(bad), bad).toBe(false);
    }
  });

  it('requires https on endpoint URLs; only the local stack document admits http', () => {
    const local = buildOpenApiDocument({ eventTypes: builtInCatalogue(), loopbackHttp: true }) as any;
    for (const name of ['CreateWebhookEndpoint', 'UpdateWebhookEndpoint']) {
      const deployedUrl = doc.components.schemas[name].properties.url;
      const localUrl = local.components.schemas[name].properties.url;
      expect(deployedUrl.description).toMatch(/`https` only/);
      expect(deployedUrl.description).toMatch(/Only the local stack's development switch allows `http`/);
      const https = new RegExp(deployedUrl.pattern, 'u');
      expect(['https://hooks.example.com/x', 'HTTPS://hooks.example.com'].every((u) => https.test(u))).toBe(true);
      expect(['http://hooks.example.com/x', 'ftp://x', ' https://x'].some((u) => https.test(u))).toBe(false);
      expect(new RegExp(localUrl.pattern, 'u').test('http://127.0.0.1:8080/hook')).toBe(true);
      expect(localUrl.description).toMatch(/local stack/);
    }
  });

  it('documents the problem tag as an open set: a string, the known tags listed, unknown ones to be accepted', () => {
    const tag = doc.components.schemas.Problem.properties.tag;
    expect(tag.type).toBe('string');
    expect(tag.enum).toBeUndefined();
    expect(tag['x-extensible-enum']).toEqual(Object.keys(ERROR_STATUS));
    expect(tag.description).toMatch(/clients must accept tags they do not know/);
    for (const known of Object.keys(ERROR_STATUS)) expect(tag.description).toContain(`\`${known}\``);
    // The service itself answers only the tags it knows.
    expect(ProblemSchema.shape.tag.safeParse('SomeFutureError').success).toBe(false);
  });
});
