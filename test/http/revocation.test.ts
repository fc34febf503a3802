/**
 * Revocation on REST (docs/architecture.md#authorizer): API Gateway may answer a request from a
 * cached authorizer decision after its token was revoked. The local stack's authorizer does not
 * cache, so this simulates the cache: the REST handler is called with the authorizer context the
 * token had before it was revoked, on DynamoDB Local. Every mutating operation answers 401 and
 * changes nothing; a read keeps the documented cache window.
 */
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKEN_OPERATIONS, type TokenOperationId } from '../../lambdas/contract/operations';
import { DEFAULT_QUOTAS } from '../../lambdas/contract/rate-limits';
import { createEventCatalogue } from '../../lambdas/domain/event-catalogue';
import { allowPolicy } from '../../lambdas/http/authorizer';
import { restHandler } from '../../lambdas/http/rest-handler';
import { resolveCaller } from '../../lambdas/operations/access';
import { ensureWorkspace, issueToken } from '../../lambdas/operations/admin';
import type { OperationImpl, SurfaceRuntime } from '../../lambdas/operations/context';
import { IMPLEMENTATIONS } from '../../lambdas/operations/index';
import { memoryRateLimiter } from '../../lambdas/operations/rate-limiter';
import { listEndpoints } from '../../lambdas/store/endpoints';
import { testSealer } from '../helpers/pipeline';
import { freshTable } from '../helpers/table';

const logger = new Logger({ serviceName: 'test', logLevel: 'SILENT' });
const context = { functionName: 'f', awsRequestId: 'r', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;
const SLUG = 'acme';
const ENDPOINT = 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC';
const DELIVERY = 'whd_01JD2Y9P0R6S8T1V3W5X7Y9ZA0';

let table: Awaited<ReturnType<typeof freshTable>>;
let runtime: SurfaceRuntime;
beforeAll(async () => {
  table = await freshTable();
  runtime = {
    deps: {
      table,
      now: () => new Date(),
      eventTypes: createEventCatalogue(),
      urlPolicy: {},
      queue: { send: async () => undefined },
      secretSealer: testSealer,
    },
    rateLimiter: memoryRateLimiter(DEFAULT_QUOTAS),
  };
  await ensureWorkspace(table, SLUG, 'Acme');
});
afterAll(async () => {
  await table?.drop();
});

/** The context API Gateway caches for a token: what the authorizer answered while it was valid. */
async function authorizerContext(token: string): Promise<Record<string, unknown>> {
  const caller = await resolveCaller(table, `Bearer ${token}`);
  if (!caller) throw new Error('token should be valid here');
  return { ...allowPolicy(caller, 'arn:aws:execute-api:eu-west-1:123456789012:api/prod/GET/x').context, principalId: caller.tokenId };
}

function handlerOf(id: TokenOperationId) {
  return restHandler(id, IMPLEMENTATIONS[id] as OperationImpl<TokenOperationId>, { runtime: () => runtime, logger });
}

/** A request as API Gateway hands it to the function: the header still there, the authorizer's (cached) context. */
function request(method: string, path: string, token: string, authorizer: Record<string, unknown>, body?: unknown): APIGatewayProxyEvent {
  return {
    path,
    httpMethod: method,
    headers: { Authorization: `Bearer ${token}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    pathParameters: {
      slug: SLUG,
      endpointId: ENDPOINT,
      deliveryId: DELIVERY,
      tokenId: 'tok_01JD2Y8M7K3V9Q4T6W1X5Z0ABC',
      jobId: 'whj_01JD2Y8M7K3V9Q4T6W1X5Z0ABC',
    },
    queryStringParameters: null,
    body: body === undefined ? null : JSON.stringify(body),
    isBase64Encoded: false,
    requestContext: { requestId: `req-${method}-${path}`, authorizer },
  } as unknown as APIGatewayProxyEvent;
}

const createBody = { url: 'https://hooks.example.com/in', eventTypes: ['webhook.test_event'] };

describe('a revoked token on REST, answered from a cached authorizer decision', () => {
  it('refuses every mutating operation with 401 and changes nothing; a read still answers within the cache window', async () => {
    const admin = await issueToken(table, SLUG, { name: 'admin', scopes: ['admin'] });
    const doomed = await issueToken(table, SLUG, { name: 'doomed', scopes: ['admin'] });
    const cached = await authorizerContext(doomed.token);

    // While valid, the same cached context creates an endpoint: the re-check passes a live token.
    const live = await handlerOf('createWebhook')(
      request('POST', `/workspaces/${SLUG}/webhooks`, doomed.token, cached, createBody),
      context,
    );
    expect(live.statusCode).toBe(201);

    const revoked = await handlerOf('revokeApiToken')(
      {
        ...request('DELETE', `/workspaces/${SLUG}/api-tokens/${doomed.tokenId}`, admin.token, await authorizerContext(admin.token)),
        pathParameters: { slug: SLUG, tokenId: doomed.tokenId },
      },
      context,
    );
    expect(revoked.statusCode).toBe(204);
    const before = await listEndpoints(table, SLUG, 200);

    const mutating = TOKEN_OPERATIONS.filter((op) => op.method !== 'GET');
    expect(mutating.length).toBeGreaterThanOrEqual(8);
    for (const op of mutating) {
      const res = await handlerOf(op.operationId as TokenOperationId)(
        request(op.method, op.path, doomed.token, cached, op.body ? createBody : undefined),
        context,
      );
      expect([op.operationId, res.statusCode]).toEqual([op.operationId, 401]);
      expect(JSON.parse(res.body)).toMatchObject({ tag: 'Unauthorized', status: 401 });
    }
    const after = await listEndpoints(table, SLUG, 200);
    expect({ items: after.items, nextCursor: after.nextCursor }).toEqual({ items: before.items, nextCursor: before.nextCursor });

    // Reads keep the documented window: the cached decision still lists the endpoints.
    const read = await handlerOf('listWebhooks')(request('GET', `/workspaces/${SLUG}/webhooks`, doomed.token, cached), context);
    expect(read.statusCode).toBe(200);
    expect(JSON.parse(read.body).items).toHaveLength(before.items.length);
  });

  it('refuses a mutating request whose header is not the token the cached context belongs to', async () => {
    const one = await issueToken(table, SLUG, { name: 'one', scopes: ['write'] });
    const other = await issueToken(table, SLUG, { name: 'other', scopes: ['read'] });
    const res = await handlerOf('createWebhook')(
      request('POST', `/workspaces/${SLUG}/webhooks`, other.token, await authorizerContext(one.token), createBody),
      context,
    );
    expect(res.statusCode).toBe(401);
  });
});
