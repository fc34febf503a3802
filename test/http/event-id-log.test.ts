/**
 * Following one event, in the real local stack (docs/behaviour.md#workspace-delivery-log): every
 * delivery carries its event's id, a replay its source's and a test send its own; the workspace
 * log filtered by `eventId` finds exactly that event's deliveries (every endpoint's and their
 * replays), newest first, combinable with the other filters; the receiver never sees the id.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { usePipelineApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
const ws = () => `/workspaces/${api.workspace}`;
const pipeline = usePipelineApi();

beforeAll(() => {
  api = pipeline.api;
});

const EVENTUALLY = { timeout: 15_000, interval: 25 };

async function publish(id: string, orderId: string) {
  const res = await fetch(`${api.apiUrl}/local/events`, {
    method: 'POST',
    body: JSON.stringify({ id, workspace: api.workspace, type: 'order.shipped', payload: { orderId } }),
  });
  expect(res.status).toBe(202);
  return (await res.json()) as { deliveryIds: string[] };
}

const byEvent = (eventId: string, extra = '') => api.call('GET', `${ws()}/deliveries?eventId=${encodeURIComponent(eventId)}${extra}`);
const ids = (page: { body: { items: { deliveryId: string }[] } }) => page.body.items.map((d) => d.deliveryId);

describe('deliveries by event', () => {
  it('finds the three deliveries of one event, newest first, and a replay of one of them; never another event', async () => {
    let failing = true;
    const r = await pipeline.receiver((_req, res) => res.writeHead(failing ? 410 : 200).end());
    const endpoints: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await api.call('POST', `${ws()}/webhooks`, { body: { url: `${r.url}?n=${i}`, eventTypes: ['order.shipped'] } });
      expect(created.status).toBe(201);
      endpoints.push(created.body.endpointId as string);
    }
    const eventId = '0b6f1d9e-8c2a-4e7b-9f31-5a4c2d1e0f77';
    const published = await publish(eventId, 'ord-42');
    expect(published.deliveryIds).toHaveLength(3);
    const other = await publish('0b6f1d9e-8c2a-4e7b-9f31-000000000000', 'ord-43');
    await vi.waitFor(() => expect(r.seen).toHaveLength(6), EVENTUALLY);

    const page = await byEvent(eventId);
    expect(page.status, page.text).toBe(200);
    expect(ids(page)).toEqual([...published.deliveryIds].sort().reverse());
    expect(new Set(page.body.items.map((d: { endpointId: string }) => d.endpointId))).toEqual(new Set(endpoints));
    for (const d of page.body.items) expect(d).toMatchObject({ eventId, eventType: 'order.shipped', payload: { orderId: 'ord-42' } });
    expect(ids(page)).not.toContain(other.deliveryIds[0]);
    // GET carries it too.
    expect((await api.call('GET', `${ws()}/webhooks/deliveries/${published.deliveryIds[0]}`)).body.eventId).toBe(eventId);

    // The receiver got exactly the spec's three members, and the event id in no header.
    for (const seen of r.seen) {
      expect(Object.keys(JSON.parse(seen.body) as object).sort()).toEqual(['deliveryId', 'eventType', 'payload']);
      expect(Object.values(seen.headers).join(' ')).not.toContain(eventId);
      expect(seen.body).not.toContain(eventId);
    }

    // A replay keeps its source's event, and is found with it, newest first.
    const source = published.deliveryIds[1]!;
    await vi.waitFor(
      async () => expect((await api.call('GET', `${ws()}/webhooks/deliveries/${source}`)).body.status).toBe('failed_permanent'),
      EVENTUALLY,
    );
    failing = false;
    const replay = await api.call('POST', `${ws()}/webhooks/deliveries/${source}/replay`);
    expect(replay.status).toBe(202);
    expect(replay.body).toMatchObject({ eventId, replayedFrom: source });
    const withReplay = await byEvent(eventId);
    expect(ids(withReplay)).toEqual([replay.body.deliveryId, ...[...published.deliveryIds].sort().reverse()]);

    // Combined with other filters: each row is checked against all of them.
    const toFirst = page.body.items
      .filter((d: { endpointId: string }) => d.endpointId === endpoints[0])
      .map((d: { deliveryId: string }) => d.deliveryId);
    expect(toFirst).toHaveLength(1);
    expect(ids(await byEvent(eventId, `&endpointId=${endpoints[0]}`))).toEqual(toFirst);
    expect(ids(await byEvent(eventId, '&status=failed_permanent')).sort()).toEqual([...published.deliveryIds].sort());
    expect(ids(await byEvent(eventId, '&eventType=webhook.test_event'))).toEqual([]);
    const until = new Date(Date.parse(replay.body.createdAt as string) - 1).toISOString();
    expect(ids(await byEvent(eventId, `&until=${until}`)).sort()).toEqual([...published.deliveryIds].sort());

    // Paged: the cursor walks the same event.
    const first = await byEvent(eventId, '&limit=2');
    expect(first.body.items).toHaveLength(2);
    const rest = await byEvent(eventId, `&limit=2&cursor=${encodeURIComponent(first.body.nextCursor as string)}`);
    expect([...ids(first), ...ids(rest)]).toEqual(ids(withReplay));
  });

  it('a test send has its own event id', async () => {
    const r = await pipeline.receiver((_req, res) => res.writeHead(200).end());
    const created = await api.call('POST', `${ws()}/webhooks`, { body: { url: r.url, eventTypes: ['webhook.test_event'] } });
    const sent = await api.call('POST', `${ws()}/webhooks/${created.body.endpointId}/test-event`);
    expect(sent.body.eventId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(ids(await byEvent(sent.body.eventId as string))).toEqual([sent.body.deliveryId]);
  });

  it('an unknown event id gives an empty page; a malformed one a 400 problem', async () => {
    const unknown = await byEvent('no-such-event');
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({ items: [], nextCursor: null });
    for (const bad of ['has space', 'x'.repeat(257), 'tab\there']) {
      const res = await byEvent(bad);
      expect(res.status, bad).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ tag: 'ValidationError' });
    }
  });
});
