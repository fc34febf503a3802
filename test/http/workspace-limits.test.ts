/**
 * Per-workspace limits (docs/behaviour.md#rate-limits) through the real local stack, configured
 * as a stage would be (the `workspaceLimits` setting): the 409 problem of a create past the
 * endpoint or token limit and the 429 problem (with `Retry-After`) of a test send or replay past
 * the workspace's quota, over REST and as MCP tool errors alike, shared by the workspace's tokens.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../../lambdas/operations/admin';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { scriptedReceiver } from '../helpers/scripted-receiver';

const LIMITS = { testSendsPerMinute: 2, replaysPerMinute: 1, endpoints: 2, apiTokens: 3 };

let api: TestApi;
/** A second admin token of the workspace, used over MCP (the seeded one is the first). */
let mcpToken: string;
const stops: (() => Promise<void>)[] = [];
const ws = () => `/workspaces/${api.workspace}`;

beforeAll(async () => {
  api = await startTestApi({
    timeScale: 1000,
    schedules: false,
    onPipelineError: () => undefined,
    workspaceLimits: JSON.stringify(LIMITS),
  });
  mcpToken = (await issueToken(api.table, api.workspace, { name: 'mcp', scopes: ['admin'] })).token;
});
afterEach(async () => {
  await Promise.all(stops.splice(0).map((s) => s()));
});
afterAll(async () => {
  await api?.close();
});

async function receiverUrl(): Promise<string> {
  const r = await scriptedReceiver((_req, res) => res.writeHead(204).end());
  stops.push(() => r.stop());
  return r.url;
}

/** One MCP tool call over HTTP with the second token: its result. */
async function tool(
  name: string,
  args: Record<string, unknown>,
): Promise<{ isError?: boolean; structuredContent: Record<string, unknown> }> {
  const res = await fetch(api.mcpUrl, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${mcpToken}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: { slug: api.workspace, ...args } } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { result: { isError?: boolean; structuredContent: Record<string, unknown> } }).result;
}

/** Waits out the last seconds of a minute, so a per-minute window cannot roll over in the middle of a test. */
async function awayFromMinuteEnd(): Promise<void> {
  const second = new Date().getUTCSeconds();
  if (second >= 45) await new Promise((resolve) => setTimeout(resolve, (61 - second) * 1000));
}

describe('endpoint and token limits', () => {
  it('refuses the endpoint past the limit with a 409 problem, on REST and MCP alike; a delete frees a slot', async () => {
    const url = await receiverUrl();
    const first = await api.call('POST', `${ws()}/webhooks`, { body: { url, eventTypes: ['webhook.test_event'] } });
    expect(first.status).toBe(201);
    expect((await api.call('POST', `${ws()}/webhooks`, { body: { url, eventTypes: ['webhook.test_event'] } })).status).toBe(201);

    const refused = await api.call('POST', `${ws()}/webhooks`, { body: { url, eventTypes: ['webhook.test_event'] } });
    expect(refused.status).toBe(409);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const detail = 'This workspace has 2 webhook endpoints, the most it may have; delete one first';
    expect(refused.body).toEqual({
      type: 'urn:problem:webhooks:Conflict',
      title: 'Conflict',
      status: 409,
      detail,
      tag: 'Conflict',
      traceId: expect.any(String),
      instance: `${ws()}/webhooks`,
    });
    expect((await api.call('GET', `${ws()}/webhooks`)).body.items).toHaveLength(2);

    expect(await tool('create_webhook', { url, eventTypes: ['webhook.test_event'] })).toMatchObject({
      isError: true,
      structuredContent: { status: 409, tag: 'Conflict', detail },
    });

    expect((await api.call('DELETE', `${ws()}/webhooks/${first.body.endpointId}`)).status).toBe(204);
    expect((await tool('create_webhook', { url, eventTypes: ['webhook.test_event'] })).isError ?? false).toBe(false);
  });

  it('refuses the API token past the limit with a 409 problem, on REST and MCP alike; a revocation frees a slot', async () => {
    // The seeded token and the MCP token are two of the three.
    const third = await api.call('POST', `${ws()}/api-tokens`, { body: { name: 'third', scopes: ['read'] } });
    expect(third.status).toBe(201);
    const refused = await api.call('POST', `${ws()}/api-tokens`, { body: { name: 'fourth', scopes: ['read'] } });
    const detail = 'This workspace has 3 API tokens, the most it may have; revoke one first';
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ type: 'urn:problem:webhooks:Conflict', status: 409, tag: 'Conflict', detail });
    expect(await tool('create_api_token', { name: 'fourth', scopes: ['read'] })).toMatchObject({
      isError: true,
      structuredContent: { status: 409, tag: 'Conflict', detail },
    });

    expect((await api.call('DELETE', `${ws()}/api-tokens/${third.body.tokenId}`)).status).toBe(204);
    expect((await api.call('POST', `${ws()}/api-tokens`, { body: { name: 'fourth', scopes: ['read'] } })).status).toBe(201);
  });
});

describe('test-send and replay quotas', () => {
  it("shares the test-send quota between REST and MCP and the workspace's tokens: the next is a 429 problem with Retry-After", async () => {
    const endpointId = ((await api.call('GET', `${ws()}/webhooks`)).body.items as { endpointId: string }[])[0]!.endpointId;
    const path = `${ws()}/webhooks/${endpointId}/test-event`;
    await awayFromMinuteEnd();
    expect((await api.call('POST', path)).status).toBe(202);
    expect((await tool('send_webhook_test_event', { endpointId })).isError ?? false).toBe(false);

    const refused = await api.call('POST', path);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.body).toEqual({
      type: 'urn:problem:webhooks:RateLimited',
      title: 'Rate limit exceeded',
      status: 429,
      detail: `This workspace's quota of 2 test sends per minute, shared by all its tokens, is used up; retry after ${retryAfter} s`,
      tag: 'RateLimited',
      traceId: expect.any(String),
      instance: path,
    });
    expect(await tool('send_webhook_test_event', { endpointId })).toMatchObject({
      isError: true,
      structuredContent: {
        status: 429,
        tag: 'RateLimited',
        detail: expect.stringMatching(
          /^This workspace's quota of 2 test sends per minute, shared by all its tokens, is used up; retry after \d+ s$/,
        ),
      },
    });
    // Only the two allowed sends made deliveries.
    expect((await api.call('GET', `${ws()}/webhooks/${endpointId}/deliveries`)).body.items).toHaveLength(2);
  });

  it('refuses the replay past the workspace quota with a 429 problem', async () => {
    const endpointId = ((await api.call('GET', `${ws()}/webhooks`)).body.items as { endpointId: string }[])[0]!.endpointId;
    // Held deliveries (published while the endpoint is disabled) are replayable.
    expect(
      (await api.call('PATCH', `${ws()}/webhooks/${endpointId}`, { body: { eventTypes: ['order.shipped'], enabled: false } })).status,
    ).toBe(200);
    const held: string[] = [];
    for (const orderId of ['a', 'b']) {
      const res = await fetch(`${api.apiUrl}/local/events`, {
        method: 'POST',
        body: JSON.stringify({ workspace: api.workspace, type: 'order.shipped', payload: { orderId } }),
      });
      held.push(...((await res.json()) as { heldDeliveryIds: string[] }).heldDeliveryIds);
    }
    expect(held).toHaveLength(2);
    expect((await api.call('PATCH', `${ws()}/webhooks/${endpointId}`, { body: { enabled: true } })).status).toBe(200);

    await awayFromMinuteEnd();
    expect((await api.call('POST', `${ws()}/webhooks/deliveries/${held[0]}/replay`)).status).toBe(202);
    const refused = await api.call('POST', `${ws()}/webhooks/deliveries/${held[1]}/replay`);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.body).toMatchObject({
      tag: 'RateLimited',
      detail: expect.stringMatching(
        /^This workspace's quota of 1 replay per minute, shared by all its tokens, is used up; retry after \d+ s$/,
      ),
    });
    expect(await tool('replay_webhook_delivery', { deliveryId: held[1] })).toMatchObject({
      isError: true,
      structuredContent: { status: 429, tag: 'RateLimited' },
    });
  });
});
