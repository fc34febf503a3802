/** The REST handler's error mapping, with injected faults (no AWS). */
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createEventCatalogue } from '../../lambdas/domain/event-catalogue';
import { restHandler } from '../../lambdas/http/rest-handler';
import { Logger } from '@aws-lambda-powertools/logger';
import { memoryRateLimiter } from '../../lambdas/operations/rate-limiter';
import { DEFAULT_QUOTAS } from '../../lambdas/contract/rate-limits';
import type { SurfaceRuntime } from '../../lambdas/operations/context';
import { testSealer } from '../helpers/pipeline';

const logger = new Logger({ serviceName: 'test', logLevel: 'SILENT' });
const runtime: SurfaceRuntime = {
  deps: {
    table: { doc: {} as never, tableName: 'unused' },
    now: () => new Date(),
    eventTypes: createEventCatalogue(),
    urlPolicy: {},
    queue: { send: async () => undefined },
    secretSealer: testSealer,
  },
  rateLimiter: memoryRateLimiter(DEFAULT_QUOTAS),
};

function event(overrides: Partial<APIGatewayProxyEvent> = {}): APIGatewayProxyEvent {
  return {
    path: '/workspaces/acme/webhooks',
    httpMethod: 'GET',
    headers: {},
    pathParameters: { slug: 'acme' },
    queryStringParameters: null,
    body: null,
    isBase64Encoded: false,
    requestContext: { requestId: 'req-1', authorizer: { workspace: 'acme', tokenId: 'tok_1', scopes: 'admin' } },
    ...overrides,
  } as unknown as APIGatewayProxyEvent;
}
const context = { functionName: 'f', awsRequestId: 'r', getRemainingTimeInMillis: () => 1000 } as unknown as Context;

describe('restHandler', () => {
  it('answers an unexpected failure with a bare 500 InternalError that shows no internals', async () => {
    const handler = restHandler(
      'listWebhooks',
      async () => {
        throw new Error('ConnectionRefused to arn:aws:dynamodb:eu-west-1:123456789012:table/secret-table');
      },
      { runtime: () => runtime, logger },
    );
    const res = await handler(event(), context);
    expect(res.statusCode).toBe(500);
    expect(res.headers?.['content-type']).toBe('application/problem+json');
    const body = JSON.parse(res.body);
    expect(body).toMatchObject({ status: 500, tag: 'InternalError', traceId: 'req-1' });
    expect(res.body).not.toMatch(/arn:|secret-table|ConnectionRefused|stack/i);
  });

  it('uses the in-process token bucket when no table is bound, and refuses past it with 429', async () => {
    const limited: SurfaceRuntime = {
      ...runtime,
      rateLimiter: memoryRateLimiter({ ...DEFAULT_QUOTAS, rest_read: { limit: 2, windowSeconds: 60 } }, () => 0),
    };
    const handler = restHandler('listWebhooks', async () => ({ items: [], nextCursor: null }), { runtime: () => limited, logger });
    expect((await handler(event(), context)).statusCode).toBe(200);
    expect((await handler(event(), context)).statusCode).toBe(200);
    const res = await handler(event(), context);
    expect(res.statusCode).toBe(429);
    expect(res.headers?.['retry-after']).toBe('30');
  });

  it('401 when the authorizer context is missing', async () => {
    const handler = restHandler('listWebhooks', async () => ({ items: [], nextCursor: null }), { runtime: () => runtime, logger });
    const res = await handler(event({ requestContext: { requestId: 'x' } as never }), context);
    expect(res.statusCode).toBe(401);
  });
});
