/**
 * Payloads as sent, end to end in the real local stack (docs/behaviour.md#limits): an event whose
 * payload has `__proto__`, `constructor` and `toString` keys, numbers beyond DynamoDB's range and
 * MAX_PAYLOAD_DEPTH levels of nesting goes in through `POST /local/events`, reaches the receiver
 * byte for byte as the spec's body on every retry, dead-letters, reads back the same through REST
 * (the delivery, the endpoint's list, the workspace log) and MCP, and replays with the same
 * payload. One level deeper is refused with a 400 problem naming the limit, and nothing is written.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { MAX_PAYLOAD_DEPTH } from '../../lambdas/contract/limits';
import { usePipelineApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
const ws = () => `/workspaces/${api.workspace}`;
const pipeline = usePipelineApi();
beforeAll(() => {
  api = pipeline.api;
});

const EVENTUALLY = { timeout: 15_000, interval: 25 };

/** `levels` arrays and objects inside one another, around `inner`. */
function nested(levels: number, inner = '1'): string {
  let text = inner;
  for (let i = 0; i < levels; i++) text = i % 2 ? `[${text}]` : `{"constructor":${text}}`;
  return text;
}

/** An `order.shipped` payload as its producer's JSON text, `levels` deep (its own object is the first level). */
const payloadText = (levels: number) =>
  `{"orderId":"o-1","__proto__":{"isAdmin":true},"constructor":{"name":"x"},"toString":"s","big":1e300,` +
  `"text":"ü 😀","deep":${nested(levels - 1)}}`;

const publish = (text: string) =>
  fetch(`${api.apiUrl}/local/events`, {
    method: 'POST',
    body: `{"workspace":${JSON.stringify(api.workspace)},"type":"order.shipped","payload":${text}}`,
  });

async function endpointTo(url: string) {
  const created = await api.call('POST', `${ws()}/webhooks`, { body: { url, eventTypes: ['order.shipped'] } });
  expect(created.status).toBe(201);
  return created.body.endpointId as string;
}

describe('a payload with any keys, up to MAX_PAYLOAD_DEPTH deep', () => {
  it('is delivered byte for byte on every attempt, reads back the same everywhere, and replays the same', async () => {
    let failing = true;
    const r = await pipeline.receiver((_req, res) => res.writeHead(failing ? 503 : 204).end());
    const endpointId = await endpointTo(r.url);
    const text = payloadText(MAX_PAYLOAD_DEPTH);
    const expected = JSON.parse(text) as unknown;
    // The spec's body: the payload's own JSON, as JSON.stringify writes the value the producer sent.
    const body = (deliveryId: string) => `{"deliveryId":"${deliveryId}","eventType":"order.shipped","payload":${JSON.stringify(expected)}}`;

    const res = await publish(text);
    expect(res.status).toBe(202);
    const [id] = ((await res.json()) as { deliveryIds: string[] }).deliveryIds;
    const dead = await vi.waitFor(async () => {
      const d = await api.call('GET', `${ws()}/webhooks/deliveries/${id}`);
      expect(d.body.status, 'delivery status').toBe('dead_lettered');
      return d;
    }, EVENTUALLY);
    expect(r.seen.map((s) => s.body)).toEqual(Array(7).fill(body(id!)));

    // Reads: the delivery, the endpoint's list, the workspace log, MCP. The text as well as the value, key order included.
    const same = (payload: unknown) => {
      expect(JSON.stringify(payload)).toBe(JSON.stringify(expected));
      expect(payload).toEqual(expected);
      expect(Object.getPrototypeOf(payload)).toBe(Object.prototype);
    };
    same(dead.body.payload);
    expect(dead.text).toContain(`"payload":${JSON.stringify(expected)}`);
    const listed = await api.call('GET', `${ws()}/webhooks/${endpointId}/deliveries`);
    same(listed.body.items.find((d: { deliveryId: string }) => d.deliveryId === id).payload);
    const logged = await api.call('GET', `${ws()}/deliveries?endpointId=${endpointId}`);
    same(logged.body.items.find((d: { deliveryId: string }) => d.deliveryId === id).payload);
    const mcp = new Client({ name: 'test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(api.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${api.token}` } } }),
    );
    try {
      const got = (await mcp.callTool({ name: 'get_webhook_delivery', arguments: { slug: api.workspace, deliveryId: id } })) as {
        structuredContent?: { payload: unknown };
      };
      same(got.structuredContent?.payload);
    } finally {
      await mcp.close();
    }

    // The replay copies the payload as stored and delivers the same body.
    failing = false;
    const replay = await api.call('POST', `${ws()}/webhooks/deliveries/${id}/replay`);
    expect(replay.status).toBe(202);
    same(replay.body.payload);
    const replayId = replay.body.deliveryId as string;
    await expect
      .poll(async () => (await api.call('GET', `${ws()}/webhooks/deliveries/${replayId}`)).body.status, EVENTUALLY)
      .toBe('delivered');
    expect(r.seen.at(-1)!.body).toBe(body(replayId));
  });
});

describe(`a payload more than MAX_PAYLOAD_DEPTH (${MAX_PAYLOAD_DEPTH}) levels deep`, () => {
  it.each([
    ['one level too deep', payloadText(MAX_PAYLOAD_DEPTH + 1)],
    ['100,000 levels deep', `{"orderId":"o-2","deep":${'['.repeat(100_000)}${']'.repeat(100_000)}}`],
  ])('%s: is refused with a 400 problem naming the limit, and nothing is written or sent', async (_name, text) => {
    const r = await pipeline.receiver((_req, res) => res.writeHead(204).end());
    const endpointId = await endpointTo(r.url);
    const res = await publish(text);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    const problem = (await res.json()) as { tag: string; detail: string; issues: { path: string }[] };
    expect(problem).toMatchObject({ tag: 'ValidationError', issues: [{ path: 'payload' }] });
    expect(problem.detail).toContain(`at most ${MAX_PAYLOAD_DEPTH} levels`);
    const listed = await api.call('GET', `${ws()}/webhooks/${endpointId}/deliveries`);
    expect(listed.body.items).toEqual([]);
    expect(r.seen).toEqual([]);
  });
});
