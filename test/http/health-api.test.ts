/**
 * Endpoint health through the real local stack (docs/behaviour.md#endpoint-health): the
 * dispatcher and dead-letter Lambda handlers over the in-process queue keep the counters;
 * REST shows them on `…/health`, on every endpoint and on the overview.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { issueToken } from '../../lambdas/operations/admin';
import { usePipelineApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
const ws = () => `/workspaces/${api.workspace}`;
const pipeline = usePipelineApi();
const EVENTUALLY = { timeout: 15_000, interval: 25 };

beforeAll(() => {
  api = pipeline.api;
});

const receiver = pipeline.receiver;

async function endpointTo(url: string): Promise<string> {
  const created = await api.call('POST', `${ws()}/webhooks`, { body: { url, eventTypes: ['webhook.test_event'] } });
  expect(created.status).toBe(201);
  return created.body.endpointId as string;
}

async function settled(deliveryId: string, status: string) {
  await vi.waitFor(async () => {
    expect((await api.call('GET', `${ws()}/webhooks/deliveries/${deliveryId}`)).body.status, 'delivery status').toBe(status);
    expect(api.queues.deliveries.depth + api.queues.slowDeliveries.depth + api.queues.deadLetters.depth, 'queued messages').toBe(0);
  }, EVENTUALLY);
}

describe('GET …/webhooks/{endpointId}/health', () => {
  it('counts a delivery once although its message is received twice, and shows it on the endpoint, the list and the overview', async () => {
    const r = await receiver((_req, res) => setTimeout(() => res.writeHead(200).end(), 100));
    const endpointId = await endpointTo(r.url);
    const before = (await api.call('GET', `${ws()}/overview`)).body.deliveries24h;
    const sent = await api.call('POST', `${ws()}/webhooks/${endpointId}/test-event`);
    const id = sent.body.deliveryId as string;
    // A duplicate of the message while the first is in flight: at least once, counted once.
    await api.queues.deliveries.send([{ deliveryId: id }]);
    await settled(id, 'delivered');
    await api.queues.deliveries.send([{ deliveryId: id }]);
    await settled(id, 'delivered');

    const res = await api.call('GET', `${ws()}/webhooks/${endpointId}/health`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      endpointId,
      window: '24h',
      attempts: 1,
      delivered: 1,
      failed: 0,
      failedPermanent: 0,
      deadLettered: 0,
      successRate: 1,
      byResponseStatus: { '200': 1 },
    });
    expect(res.body.latencyMs.p50).toBeGreaterThanOrEqual(100);
    expect(res.body.series).toHaveLength(24);
    expect(res.body.series.at(-1)).toMatchObject({ delivered: 1, failed: 0 });
    expect(Date.parse(res.body.to) - Date.parse(res.body.from)).toBeLessThanOrEqual(24 * 3_600_000);

    const got = await api.call('GET', `${ws()}/webhooks/${endpointId}`);
    expect(got.body.health.successRate24h).toBe(1);
    expect(Date.parse(got.body.health.lastAttemptAt)).toBeGreaterThanOrEqual(Date.parse(sent.body.createdAt));
    const list = await api.call('GET', `${ws()}/webhooks?limit=200`);
    expect(list.body.items.find((e: { endpointId: string }) => e.endpointId === endpointId).health).toEqual(got.body.health);
    const overview = (await api.call('GET', `${ws()}/overview`)).body.deliveries24h;
    expect(overview).toEqual({ delivered: before.delivered + 1, failed: before.failed, deadLettered: before.deadLettered });
  });

  it('counts every failed attempt of the retry ladder and the dead-lettering', async () => {
    const r = await receiver((_req, res) => res.writeHead(503).end());
    const endpointId = await endpointTo(r.url);
    const before = (await api.call('GET', `${ws()}/overview`)).body.deliveries24h;
    const sent = await api.call('POST', `${ws()}/webhooks/${endpointId}/test-event`);
    await settled(sent.body.deliveryId, 'dead_lettered');

    const week = await api.call('GET', `${ws()}/webhooks/${endpointId}/health?window=7d`);
    expect(week.body).toMatchObject({
      window: '7d',
      attempts: 7,
      delivered: 0,
      failed: 7,
      failedPermanent: 0,
      deadLettered: 1,
      successRate: 0,
      byResponseStatus: { '503': 7 },
    });
    expect(week.body.series).toHaveLength(7);
    expect(week.body.series.at(-1)).toMatchObject({ delivered: 0, failed: 7 });
    expect((await api.call('GET', `${ws()}/webhooks/${endpointId}`)).body.health.successRate24h).toBe(0);
    expect((await api.call('GET', `${ws()}/overview`)).body.deliveries24h).toEqual({
      delivered: before.delivered,
      failed: before.failed + 7,
      deadLettered: before.deadLettered + 1,
    });
  });

  it('a new endpoint has null health; a read token may read it; a bad window is 400, an unknown endpoint 404', async () => {
    const endpointId = await endpointTo('https://hooks.example.com/quiet');
    const { token } = await issueToken(api.table, api.workspace, { name: 'reader', scopes: ['read'] });
    const res = await api.call('GET', `${ws()}/webhooks/${endpointId}/health`, { token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ attempts: 0, successRate: null, latencyMs: { p50: null, p95: null }, byResponseStatus: {} });
    expect((await api.call('GET', `${ws()}/webhooks/${endpointId}`, { token })).body.health).toEqual({
      successRate24h: null,
      lastAttemptAt: null,
    });
    const bad = await api.call('GET', `${ws()}/webhooks/${endpointId}/health?window=30d`);
    expect([bad.status, bad.body.tag]).toEqual([400, 'ValidationError']);
    const unknown = await api.call('GET', `${ws()}/webhooks/whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC/health`);
    expect([unknown.status, unknown.body.tag]).toEqual([404, 'EndpointNotFound']);
    // The literal `deliveries` segment wins (.redocly.yaml): `health` is no delivery id.
    const literal = await api.call('GET', `${ws()}/webhooks/deliveries/health`);
    expect([literal.status, literal.body.tag]).toEqual([400, 'ValidationError']);
  });
});
