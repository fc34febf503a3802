/**
 * GET /workspaces/{slug}/deliveries through the real local stack
 * (docs/behaviour.md#workspace-delivery-log): the workspace's deliveries newest
 * first, filters that combine, 401 without a token, a read-scope token
 * allowed, 400 naming the field on bad filters, and an empty page for a
 * cursor that does not decode or was made under other filters.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { newPendingDelivery } from '../../lambdas/domain/delivery-lifecycle';
import { issueToken } from '../../lambdas/operations/admin';
import { putPendingDeliveries } from '../../lambdas/store/deliveries';
import { usePipelineApi, type TestApi } from '../helpers/local-api';
import { scriptedReceiver } from '../helpers/scripted-receiver';

let api: TestApi;
const log = () => `/workspaces/${api.workspace}/deliveries`;
const pipeline = usePipelineApi();
const { stops } = pipeline;

beforeAll(() => {
  api = pipeline.api;
});

async function endpointTo(url: string) {
  const created = await api.call('POST', `/workspaces/${api.workspace}/webhooks`, { body: { url, eventTypes: ['webhook.test_event'] } });
  expect(created.status).toBe(201);
  return created.body.endpointId as string;
}

describe('the workspace delivery log', () => {
  it('lists the deliveries of every endpoint, newest first, and filters them', async () => {
    const ok = await scriptedReceiver((_q, res) => res.writeHead(200).end());
    const gone = await scriptedReceiver((_q, res) => res.writeHead(410).end());
    stops.push(
      () => ok.stop(),
      () => gone.stop(),
    );
    const good = await endpointTo(ok.url);
    const bad = await endpointTo(gone.url);
    const sent: string[] = [];
    for (const endpointId of [good, bad, good]) {
      const res = await api.call('POST', `/workspaces/${api.workspace}/webhooks/${endpointId}/test-event`);
      expect(res.status).toBe(202);
      sent.push(res.body.deliveryId);
    }
    await expect
      .poll(async () => (await api.call('GET', `${log()}?status=pending`)).body.items, { timeout: 10_000, interval: 25 })
      .toEqual([]);

    const all = await api.call('GET', log());
    expect(all.status).toBe(200);
    expect(all.body.items.map((d: { deliveryId: string }) => d.deliveryId)).toEqual([...sent].reverse());
    expect(all.body.items[0]).toMatchObject({
      endpointId: good,
      status: 'delivered',
      eventType: 'webhook.test_event',
      payload: expect.any(Object),
    });
    expect(all.body.nextCursor).toBeNull();

    const failed = await api.call('GET', `${log()}?status=failed_permanent,dead_lettered`);
    expect(failed.body.items.map((d: { deliveryId: string }) => d.deliveryId)).toEqual([sent[1]]);
    const ofGood = await api.call('GET', `${log()}?endpointId=${good}&eventType=webhook.*&status=delivered`);
    expect(ofGood.body.items.map((d: { deliveryId: string }) => d.deliveryId)).toEqual([sent[2], sent[0]]);
    const none = await api.call('GET', `${log()}?eventType=order.*`);
    expect(none.body).toEqual({ items: [], nextCursor: null });

    const createdAt = all.body.items.map((d: { createdAt: string }) => d.createdAt) as string[];
    const window = await api.call('GET', `${log()}?since=${encodeURIComponent(createdAt[1]!)}&until=${encodeURIComponent(createdAt[1]!)}`);
    expect(window.body.items.map((d: { deliveryId: string }) => d.deliveryId)).toEqual([sent[1]]);

    // Pages of one, each cursor tied to its filters.
    const first = await api.call('GET', `${log()}?limit=1&eventType=webhook.test_event`);
    expect(first.body.items).toHaveLength(1);
    const second = await api.call('GET', `${log()}?limit=1&eventType=webhook.test_event&cursor=${first.body.nextCursor}`);
    expect(second.body.items.map((d: { deliveryId: string }) => d.deliveryId)).toEqual([sent[1]]);
    const otherFilters = await api.call('GET', `${log()}?limit=1&cursor=${first.body.nextCursor}`);
    expect(otherFilters.status).toBe(200);
    expect(otherFilters.body).toEqual({ items: [], nextCursor: null });
  });

  it('reads the caller workspace only', async () => {
    const other = 'other-workspace';
    const endpointId = 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC';
    await putPendingDeliveries(api.table, [
      newPendingDelivery({ workspace: other, endpointId, eventType: 'webhook.test_event', payload: {} }, new Date()),
    ]);
    const mine = await api.call('GET', `${log()}?limit=200`);
    expect(mine.body.items.every((d: { endpointId: string }) => d.endpointId !== endpointId)).toBe(true);
    expect((await api.call('GET', `/workspaces/${other}/deliveries`)).status).toBe(404);
  });

  it('401 without a token; a read-scope token may list', async () => {
    const anonymous = await api.call('GET', log(), { token: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('content-type')).toContain('application/problem+json');
    const { token } = await issueToken(api.table, api.workspace, { name: 'reader', scopes: ['read'] });
    const read = await api.call('GET', `${log()}?status=delivered`, { token });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ items: expect.any(Array) });
  });

  it.each([
    ['status=delivered,nope', 'query.status'],
    ['status=', 'query.status'],
    ['eventType=order', 'query.eventType'],
    ['eventType=order.*.shipped', 'query.eventType'],
    ['eventType=*', 'query.eventType'],
    ['endpointId=whe_nope', 'query.endpointId'],
    ['since=yesterday', 'query.since'],
    ['until=2026-13-01T00:00:00Z', 'query.until'],
    ['since=2026-11-25T12:00:00', 'query.since'],
    ['since=2026-11-26T00:00:00Z&until=2026-11-25T00:00:00Z', 'query.since'],
  ])('400 ValidationError naming the field: %s', async (query, field) => {
    const res = await api.call('GET', `${log()}?${query}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ tag: 'ValidationError', status: 400 });
    expect(res.body.issues.map((i: { path: string }) => i.path)).toEqual([field]);
    expect(res.body.detail).toContain(field);
  });

  it('a cursor that does not decode, or of another list, gives an empty page', async () => {
    for (const cursor of [
      'garbage',
      'WyJhIiwid2hlXzAxIl0',
      Buffer.from(JSON.stringify(['2026-11-25T12:00:00.000Z', 'whd_01JD2Y9P0R6S8T1V3W5X7Y9ZAB'])).toString('base64url'),
    ]) {
      const res = await api.call('GET', `${log()}?cursor=${cursor}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ items: [], nextCursor: null });
    }
    expect((await api.call('GET', `${log()}?since=2026-11-25&until=2026-11-25`)).status).toBe(200);
  });
});
