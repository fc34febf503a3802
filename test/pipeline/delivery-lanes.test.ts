/**
 * Delivery lanes end to end in the real local stack (docs/behaviour.md#delivery-lanes): a slow
 * receiver's deliveries wait in the slow lane, so a healthy endpoint of the same events keeps its
 * latency; the slow lane caps what one endpoint has in flight; deferrals and moves use up no
 * attempt; a failing endpoint's retries run in the slow lane and still end as the spec says.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { SLOW_LANE } from '../../lambdas/domain/delivery-lanes';
import { SLOW_LANE_CONSUMER } from '../../lambdas/contract/deployment';
import { usePipelineApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
const ws = () => `/workspaces/${api.workspace}`;
const pipeline = usePipelineApi();

beforeAll(() => {
  api = pipeline.api;
});

/** How long a slow receiver takes to answer: just over what marks an endpoint slow. */
const SLOW_ANSWER_MS = SLOW_LANE.slowAttemptMs + 300;

async function endpointTo(url: string) {
  const created = await api.call('POST', `${ws()}/webhooks`, { body: { url, eventTypes: ['order.shipped'] } });
  expect(created.status).toBe(201);
  return created.body.endpointId as string;
}

async function publish(orderId: string): Promise<string[]> {
  const res = await fetch(`${api.apiUrl}/local/events`, {
    method: 'POST',
    body: JSON.stringify({ workspace: api.workspace, type: 'order.shipped', payload: { orderId } }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { deliveryIds: string[] }).deliveryIds;
}

async function deliveriesOf(endpointId: string) {
  const res = await api.call('GET', `${ws()}/webhooks/${endpointId}/deliveries?limit=100`);
  expect(res.status).toBe(200);
  return res.body.items as { deliveryId: string; status: string; attempts: number }[];
}

describe('delivery lanes', () => {
  it('a slow receiver waits in the slow lane: a healthy endpoint of the same events keeps its latency, the slow one gets at most 2 per batch in flight, and no deferral uses up an attempt', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const slow = await pipeline.receiver((_req, res) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => {
        inFlight--;
        res.writeHead(204).end();
      }, SLOW_ANSWER_MS);
    });
    const arrivedAt = new Map<string, number>();
    const healthy = await pipeline.receiver((req, res) => {
      arrivedAt.set(String(req.headers['webhook-id']), Date.now());
      res.writeHead(204).end();
    });
    const slowId = await endpointTo(slow.url);
    const healthyId = await endpointTo(healthy.url);

    // The first delivery to the slow receiver runs in the fast lane and takes its time: that marks it slow.
    await publish('warm-up');
    await vi.waitFor(async () => expect((await deliveriesOf(slowId)).map((d) => d.status)).toEqual(['delivered']), {
      timeout: 15_000,
      interval: 100,
    });

    // Then a steady stream of events, each to both endpoints.
    const publishedAt = new Map<string, number>();
    for (let i = 0; i < 12; i++) {
      const at = Date.now();
      for (const id of await publish(`o-${i}`)) publishedAt.set(id, at);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const healthyIds = (await deliveriesOf(healthyId)).map((d) => d.deliveryId).filter((id) => publishedAt.has(id));
    expect(healthyIds).toHaveLength(12);
    await vi.waitFor(() => expect(healthyIds.every((id) => arrivedAt.has(id))).toBe(true), { timeout: 10_000, interval: 25 });
    const latencies = healthyIds.map((id) => arrivedAt.get(id)! - publishedAt.get(id)!);
    // In one lane, four fast batches held by the slow receiver would keep these waiting for seconds.
    expect(Math.max(...latencies), `healthy latencies ${latencies.join(', ')} ms`).toBeLessThan(SLOW_LANE.slowAttemptMs / 2);

    // Every slow delivery arrives, each with exactly one attempt (deferrals and moves are no attempt).
    await vi.waitFor(
      async () => {
        const slowDeliveries = await deliveriesOf(slowId);
        expect(slowDeliveries).toHaveLength(13);
        expect(slowDeliveries.every((d) => d.status === 'delivered' && d.attempts === 1)).toBe(true);
      },
      { timeout: 60_000, interval: 250 },
    );
    expect(slow.seen).toHaveLength(13);
    // The slow lane's cap: 2 per endpoint per batch, 4 batches at once.
    expect(maxInFlight).toBeLessThanOrEqual(SLOW_LANE.perEndpointPerBatch * SLOW_LANE_CONSUMER.maxConcurrency);
    for (const id of [slowId, healthyId]) expect((await api.call('DELETE', `${ws()}/webhooks/${id}`)).status).toBe(204);
  }, 90_000);

  it('a failing endpoint retries in the slow lane with the spec’s ladder, and is dead-lettered after 7 attempts', async () => {
    const failing = await pipeline.receiver((_req, res) => res.writeHead(503).end());
    const endpointId = await endpointTo(failing.url);
    await publish('failing');
    await vi.waitFor(
      async () => {
        const d = (await deliveriesOf(endpointId))[0]!;
        expect(d).toMatchObject({ status: 'dead_lettered', attempts: 7 });
      },
      { timeout: 30_000, interval: 100 },
    );
    expect(failing.seen).toHaveLength(7);
    const attempts = await api.call('GET', `${ws()}/webhooks/deliveries/${(await deliveriesOf(endpointId))[0]!.deliveryId}/attempts`);
    expect(attempts.body.items.map((a: { outcome: string }) => a.outcome)).toEqual([...Array(7).fill('failed'), 'dead_lettered']);
  }, 60_000);
});
