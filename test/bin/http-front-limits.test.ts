/**
 * The local front at AWS's boundaries (docs/behaviour.md#limits), byte for byte: Lambda's 6 MB
 * request and response, API Gateway's 10 MB body and 29 s integration timeout, and the MCP
 * function URL's buffered payload limits. Each is refused where AWS refuses, with the answer the
 * deployed gateway response (or the function URL) gives, and accepted one byte under. The two
 * functions are stand-ins whose run time and answer size the test sets: the limits belong to the
 * front, not to what a function does.
 */
import { ResponseType } from 'aws-cdk-lib/aws-apigateway';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  API_GATEWAY_INTEGRATION_TIMEOUT_SECONDS,
  API_GATEWAY_PAYLOAD_BYTES,
  LAMBDA_SYNC_PAYLOAD_BYTES,
} from '../../lambdas/contract/aws-limits';
import { ERROR_STATUS, errorTitle, errorType, GATEWAY_DETAILS } from '../../lambdas/contract/errors';
import { GATEWAY_PROBLEMS } from '../../lib/constructs/problem-responses';
import { INTEGRATION_TIMEOUT_MS } from '../../bin/local/http-front';
import { startTestApi, type TestApi } from '../helpers/local-api';

/** What the stand-in functions do: how long they take, what they answer; what they were invoked with. */
const control = vi.hoisted(() => ({
  delayMs: 0,
  result: undefined as APIGatewayProxyResult | undefined,
  events: [] as unknown[],
  finished: 0,
}));
vi.mock('#lambdas/functions/create-webhook', () => ({ handler: standIn }));
vi.mock('#lambdas/functions/mcp', () => ({ handler: standIn }));
async function standIn(event: unknown): Promise<APIGatewayProxyResult> {
  control.events.push(event);
  await new Promise((resolve) => setTimeout(resolve, control.delayMs));
  control.finished++;
  return control.result ?? { statusCode: 201, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' };
}

/** A short integration timeout, so the 29 s boundary is proven in a second. */
const TIMEOUT_MS = 1_000;

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ schedules: false, integrationTimeoutMs: TIMEOUT_MS });
}, 60_000);
afterAll(async () => {
  await api?.close();
});
beforeEach(() => {
  control.delayMs = 0;
  control.result = undefined;
  control.events = [];
  control.finished = 0;
});

const rest = (body: string) => api.call('POST', `/workspaces/${api.workspace}/webhooks`, { rawBody: body });
const mcp = (body: string) =>
  fetch(api.mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${api.token}` }, body });

/**
 * The body length whose Lambda event is exactly `limit` bytes: one probe invocation measures the
 * event around a 6,000,000-byte body (the content-length keeps its 7 digits up to the limit).
 */
async function bodyLengthAtLimit(send: (body: string) => Promise<unknown>, limit: number): Promise<number> {
  const probe = 6_000_000;
  await send('a'.repeat(probe));
  expect(control.events).toHaveLength(1);
  const eventBytes = Buffer.byteLength(JSON.stringify(control.events[0]), 'utf8');
  control.events = [];
  return probe + (limit - eventBytes);
}

/** A function result whose JSON is exactly `bytes` long. */
function resultOf(bytes: number): APIGatewayProxyResult {
  const empty = { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '' };
  return { ...empty, body: 'x'.repeat(bytes - JSON.stringify(empty).length) };
}

describe('REST API (API Gateway, then Lambda)', () => {
  it('Lambda request: an event of exactly 6 MB reaches the function; one byte more is the 502 API Gateway answers, the function never runs', async () => {
    const length = await bodyLengthAtLimit(rest, LAMBDA_SYNC_PAYLOAD_BYTES);
    const under = await rest('a'.repeat(length));
    expect(under.status).toBe(201);
    expect(Buffer.byteLength(JSON.stringify(control.events[0]))).toBe(LAMBDA_SYNC_PAYLOAD_BYTES);
    control.events = [];
    const over = await rest('a'.repeat(length + 1));
    expect(over.status).toBe(502);
    expect(over.body).toMatchObject({ tag: 'BadGateway', detail: GATEWAY_DETAILS.noUsableAnswer });
    expect(control.events).toHaveLength(0);
  }, 60_000);

  it('API Gateway body: exactly 10 MB passes API Gateway (then over Lambda: 502); one byte more is its 413', async () => {
    const at = await rest('a'.repeat(API_GATEWAY_PAYLOAD_BYTES));
    expect(at.status).toBe(502);
    const over = await rest('a'.repeat(API_GATEWAY_PAYLOAD_BYTES + 1));
    expect(over.status).toBe(413);
    expect(over.headers.get('content-type')).toBe('application/problem+json');
    expect(over.body).toMatchObject({ tag: 'PayloadTooLarge', detail: GATEWAY_DETAILS.requestTooLarge });
    expect(control.events).toHaveLength(0);
  }, 60_000);

  it('Lambda response: a result of exactly 6 MB is delivered; one byte more is the 502 API Gateway answers', async () => {
    control.result = resultOf(LAMBDA_SYNC_PAYLOAD_BYTES);
    const at = await rest('{}');
    expect(at.status).toBe(200);
    expect(at.text).toBe(control.result.body);
    control.result = resultOf(LAMBDA_SYNC_PAYLOAD_BYTES + 1);
    const over = await rest('{}');
    expect(over.status).toBe(502);
    expect(over.body).toMatchObject({ tag: 'BadGateway', detail: GATEWAY_DETAILS.noUsableAnswer });
  }, 60_000);

  it('integration timeout: the front waits API Gateway’s 29 s by default', () => {
    expect(INTEGRATION_TIMEOUT_MS).toBe(API_GATEWAY_INTEGRATION_TIMEOUT_SECONDS * 1000);
    expect(API_GATEWAY_INTEGRATION_TIMEOUT_SECONDS).toBe(29);
  });

  it('integration timeout: a function slower than the timeout gets the deployed 504 gateway response, and keeps running', async () => {
    control.delayMs = TIMEOUT_MS + 2_000;
    const res = await rest('{}');
    expect(res.status).toBe(504);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    // The body the deployed INTEGRATION_TIMEOUT gateway response renders.
    const deployed = GATEWAY_PROBLEMS.find((p) => p.type === ResponseType.INTEGRATION_TIMEOUT)!;
    expect(res.body).toMatchObject({
      type: errorType(deployed.tag),
      title: errorTitle(deployed.tag),
      status: ERROR_STATUS[deployed.tag],
      detail: deployed.detail,
      tag: 'GatewayTimeout',
    });
    expect(res.body.status).toBe(504);
    expect(res.body.traceId).toEqual(expect.any(String));
    // Answered while the function still ran; as on Lambda, it runs on after API Gateway stopped waiting.
    expect(control.finished).toBe(0);
    await expect.poll(() => control.finished, { timeout: 5_000, interval: 20 }).toBe(1);
  }, 30_000);

  it('integration timeout: a function that answers just within it is answered normally', async () => {
    control.delayMs = TIMEOUT_MS / 2;
    const res = await rest('{}');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ ok: true });
  }, 30_000);
});

describe('MCP function URL (BUFFERED)', () => {
  it('request: an event of exactly 6 MB reaches the function; one byte more is the URL’s 413, the function never runs', async () => {
    const length = await bodyLengthAtLimit(mcp, LAMBDA_SYNC_PAYLOAD_BYTES);
    const under = await mcp('a'.repeat(length));
    expect(under.status).toBe(201);
    expect(Buffer.byteLength(JSON.stringify(control.events[0]))).toBe(LAMBDA_SYNC_PAYLOAD_BYTES);
    control.events = [];
    const over = await mcp('a'.repeat(length + 1));
    expect(over.status).toBe(413);
    expect(over.headers.get('content-type')).toBe('application/json');
    expect(await over.json()).toEqual({ Message: expect.stringContaining(String(LAMBDA_SYNC_PAYLOAD_BYTES)) });
    expect(control.events).toHaveLength(0);
  }, 60_000);

  it('request: API Gateway’s limit does not apply; a body over 10 MB is the URL’s 413, not a gateway problem', async () => {
    const res = await mcp('a'.repeat(API_GATEWAY_PAYLOAD_BYTES + 1));
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(control.events).toHaveLength(0);
  }, 60_000);

  it('response: a result of exactly 6 MB is delivered; one byte more is the URL’s 502', async () => {
    control.result = resultOf(LAMBDA_SYNC_PAYLOAD_BYTES);
    const at = await mcp('{}');
    expect(at.status).toBe(200);
    expect((await at.text()).length).toBe(control.result.body.length);
    control.result = resultOf(LAMBDA_SYNC_PAYLOAD_BYTES + 1);
    const over = await mcp('{}');
    expect(over.status).toBe(502);
    expect(over.headers.get('content-type')).toBe('application/json');
  }, 60_000);

  it('the MCP function is not held to API Gateway’s integration timeout', async () => {
    control.delayMs = TIMEOUT_MS + 300;
    const res = await mcp('{}');
    expect(res.status).toBe(201);
  }, 30_000);
});
