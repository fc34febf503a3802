/**
 * The REST handler's `Idempotency-Key` middleware on DynamoDB Local, with an operation held
 * open: a repeat while the first request runs is 409, then answers the first response; the
 * operation runs once; a failed first attempt stores nothing; the header's name is case-blind.
 */
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../lambdas/contract/errors';
import { DEFAULT_QUOTAS } from '../../lambdas/contract/rate-limits';
import { createEventCatalogue } from '../../lambdas/domain/event-catalogue';
import { restHandler } from '../../lambdas/http/rest-handler';
import type { SurfaceRuntime } from '../../lambdas/operations/context';
import { issueToken } from '../../lambdas/operations/admin';
import { memoryRateLimiter } from '../../lambdas/operations/rate-limiter';
import { testSealer } from '../helpers/pipeline';
import { freshTable } from '../helpers/table';

const logger = new Logger({ serviceName: 'test', logLevel: 'SILENT' });
let table: Awaited<ReturnType<typeof freshTable>>;
let runtime: SurfaceRuntime;
/** A real token: mutating routes re-read it (docs/architecture.md#authorizer). */
let caller: { token: string; tokenId: string };
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
  caller = await issueToken(table, 'acme', { name: 'test', scopes: ['admin'] });
});
afterAll(async () => {
  await table?.drop();
});

const ENDPOINT = 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC';
function testSend(headers: Record<string, string>, requestId: string): APIGatewayProxyEvent {
  return {
    path: `/workspaces/acme/webhooks/${ENDPOINT}/test-event`,
    httpMethod: 'POST',
    headers: { authorization: `Bearer ${caller.token}`, ...headers },
    pathParameters: { slug: 'acme', endpointId: ENDPOINT },
    queryStringParameters: null,
    body: null,
    isBase64Encoded: false,
    requestContext: { requestId, authorizer: { workspace: 'acme', tokenId: caller.tokenId, scopes: 'admin' } },
  } as unknown as APIGatewayProxyEvent;
}
const context = { functionName: 'f', awsRequestId: 'r', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

const delivery = (n: number) => ({
  deliveryId: `whd_01JD2Y9P0R6S8T1V3W5X7Y9ZA${n}`,
  endpointId: ENDPOINT,
  eventType: 'webhook.test_event',
  status: 'pending',
  attempts: 0,
});

describe('Idempotency-Key middleware', () => {
  it('answers 409 while the first request runs, then the first response; the operation runs once', async () => {
    let calls = 0;
    let entered!: () => void;
    const running = new Promise<void>((resolve) => (entered = resolve));
    let finish!: () => void;
    const gate = new Promise<void>((resolve) => (finish = resolve));
    const handler = restHandler(
      'sendWebhookTestEvent',
      (async () => {
        calls++;
        entered();
        await gate;
        return delivery(calls);
      }) as never,
      { runtime: () => runtime, logger },
    );

    const first = handler(testSend({ 'Idempotency-Key': 'slow' }, 'req-1'), context);
    await running;
    const during = await handler(testSend({ 'idempotency-key': 'slow' }, 'req-2'), context);
    expect(during.statusCode).toBe(409);
    expect(JSON.parse(during.body)).toMatchObject({ tag: 'IdempotencyKeyInProgress', status: 409 });

    finish();
    const answered = await first;
    expect(answered.statusCode).toBe(202);
    expect(answered.headers?.['idempotent-replayed']).toBeUndefined();
    const after = await handler(testSend({ 'IDEMPOTENCY-KEY': 'slow' }, 'req-3'), context);
    expect(after.statusCode).toBe(202);
    expect(after.headers?.['idempotent-replayed']).toBe('true');
    expect(after.headers?.['x-trace-id']).toBe('req-3');
    expect(JSON.parse(after.body)).toEqual(JSON.parse(answered.body));
    expect(calls).toBe(1);
  });

  it('stores no failure: the same key runs the operation again after a refusal or a crash', async () => {
    const outcomes: (() => unknown)[] = [
      () => {
        throw new AppError('EndpointDisabled', 'disabled');
      },
      () => {
        throw new Error('boom');
      },
      () => delivery(7),
    ];
    let calls = 0;
    const handler = restHandler('sendWebhookTestEvent', (async () => outcomes[calls++]!()) as never, { runtime: () => runtime, logger });
    expect((await handler(testSend({ 'Idempotency-Key': 'flaky' }, 'a'), context)).statusCode).toBe(409);
    expect((await handler(testSend({ 'Idempotency-Key': 'flaky' }, 'b'), context)).statusCode).toBe(500);
    const ok = await handler(testSend({ 'Idempotency-Key': 'flaky' }, 'c'), context);
    expect(ok.statusCode).toBe(202);
    expect(ok.headers?.['idempotent-replayed']).toBeUndefined();
    expect(calls).toBe(3);
    expect((await handler(testSend({ 'Idempotency-Key': 'flaky' }, 'd'), context)).headers?.['idempotent-replayed']).toBe('true');
    expect(calls).toBe(3);
  });

  it('runs as always without the header', async () => {
    let calls = 0;
    const handler = restHandler('sendWebhookTestEvent', (async () => delivery(++calls)) as never, { runtime: () => runtime, logger });
    await handler(testSend({}, 'x'), context);
    await handler(testSend({}, 'y'), context);
    expect(calls).toBe(2);
  });
});
