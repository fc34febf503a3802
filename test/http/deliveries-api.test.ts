/**
 * The delivery pipeline end to end in the real local stack: REST → publisher
 * / test send → in-process queue (SQS semantics) → dispatcher → loopback
 * receiver verifying with `standardwebhooks` → evidence through REST; the
 * retry ladder to dead_lettered with its Notification; replay; the 409s.
 */
import { Webhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { usePipelineApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
const ws = () => `/workspaces/${api.workspace}`;
const pipeline = usePipelineApi();

beforeAll(() => {
  api = pipeline.api;
});

const receiver = pipeline.receiver;

/** How long the pipeline gets to reach a state, and how often it is looked at. */
const EVENTUALLY = { timeout: 15_000, interval: 25 };

async function endpointTo(url: string, eventTypes = ['webhook.test_event']) {
  const created = await api.call('POST', `${ws()}/webhooks`, { body: { url, eventTypes } });
  expect(created.status).toBe(201);
  const rotated = await api.call('POST', `${ws()}/webhooks/${created.body.endpointId}/rotate-secret`);
  return { endpointId: created.body.endpointId as string, secret: rotated.body.secret as string };
}

const delivery = (id: string) => api.call('GET', `${ws()}/webhooks/deliveries/${id}`);

describe('test send', () => {
  it('queues a signed webhook.test_event that arrives and is recorded as delivered', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end('thanks'));
    const { endpointId, secret } = await endpointTo(r.url);
    const sent = await api.call('POST', `${ws()}/webhooks/${endpointId}/test-event`);
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ endpointId, status: 'pending', attempts: 0, eventType: 'webhook.test_event', replayedFrom: null });
    const id = sent.body.deliveryId as string;

    const done = await vi.waitFor(async () => {
      const d = await delivery(id);
      expect(d.body.status, 'delivery status').toBe('delivered');
      return d;
    }, EVENTUALLY);
    expect(done.body).toMatchObject({ attempts: 1, lastResponseStatus: 200 });
    const req = r.seen[0]!;
    const verified = new Webhook(secret).verify(req.body, {
      'webhook-id': String(req.headers['webhook-id']),
      'webhook-timestamp': String(req.headers['webhook-timestamp']),
      'webhook-signature': String(req.headers['webhook-signature']),
    }) as { eventType: string; deliveryId: string };
    expect(verified).toMatchObject({ deliveryId: id, eventType: 'webhook.test_event' });

    const attempts = await api.call('GET', `${ws()}/webhooks/deliveries/${id}/attempts`);
    expect(attempts.body.items).toEqual([
      expect.objectContaining({ ordinal: 1, outcome: 'delivered', responseStatus: 200, responseBody: 'thanks' }),
    ]);
    expect(attempts.body.nextCursor).toBeNull();
    const list = await api.call('GET', `${ws()}/webhooks/${endpointId}/deliveries`);
    expect(list.body.items.map((d: { deliveryId: string }) => d.deliveryId)).toEqual([id]);
  });

  it('409 for a disabled endpoint; 404 for an unknown one', async () => {
    const { endpointId } = await endpointTo('https://hooks.example.com/disabled');
    await api.call('PATCH', `${ws()}/webhooks/${endpointId}`, { body: { enabled: false } });
    const res = await api.call('POST', `${ws()}/webhooks/${endpointId}/test-event`);
    expect(res.status).toBe(409);
    expect(res.body.tag).toBe('EndpointDisabled');
    expect((await api.call('POST', `${ws()}/webhooks/whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC/test-event`)).status).toBe(404);
  });
});

describe('domain events', () => {
  it('a workspace subscribed to its own changes receives webhook.created', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end());
    await endpointTo(r.url, ['webhook.created']);
    const created = await api.call('POST', `${ws()}/webhooks`, {
      body: { url: 'https://hooks.example.com/new', eventTypes: ['webhook.test_event'] },
    });
    await expect
      .poll(() => r.seen.some((s) => JSON.parse(s.body).payload?.endpointId === created.body.endpointId), {
        ...EVENTUALLY,
        message: 'webhook.created delivered',
      })
      .toBe(true);
    const got = r.seen.map((s) => JSON.parse(s.body)).find((b) => b.payload.endpointId === created.body.endpointId);
    expect(got).toMatchObject({
      eventType: 'webhook.created',
      payload: { url: 'https://hooks.example.com/…', eventTypes: ['webhook.test_event'] },
    });
  });
});

describe('the retry ladder', () => {
  it('retries 6 times, dead-letters, notifies; replay creates a new delivery that succeeds', async () => {
    let failing = true;
    const r = await receiver((_req, res) => res.writeHead(failing ? 503 : 200).end());
    const { endpointId } = await endpointTo(r.url);
    const sent = await api.call('POST', `${ws()}/webhooks/${endpointId}/test-event`);
    const id = sent.body.deliveryId as string;

    const dead = await vi.waitFor(async () => {
      const d = await delivery(id);
      expect(d.body.status, 'delivery status').toBe('dead_lettered');
      return d;
    }, EVENTUALLY);
    expect(dead.body).toMatchObject({ attempts: 7, lastResponseStatus: 503, lastError: 'http_503', nextAttemptAt: null });
    expect(r.seen).toHaveLength(7);
    expect(new Set(r.seen.map((s) => s.headers['webhook-id']))).toEqual(new Set([id]));
    const attempts = (await api.call('GET', `${ws()}/webhooks/deliveries/${id}/attempts`)).body.items;
    expect(attempts.map((a: { outcome: string }) => a.outcome)).toEqual([...Array(7).fill('failed'), 'dead_lettered']);
    expect(attempts[7]).toMatchObject({ durationMs: null, failureReason: 'retries_exhausted' });

    const notes = await vi.waitFor(async () => {
      const n = await api.call('GET', `${ws()}/notifications`);
      const note = n.body.items.find((x: { deliveryId: string }) => x.deliveryId === id);
      expect(note, 'notification').toBeDefined();
      return note;
    }, EVENTUALLY);
    expect(notes).toMatchObject({ kind: 'delivery.dead_lettered', endpointId });

    // Replays: 409 while disabled, then a new pending row from the same payload.
    await api.call('PATCH', `${ws()}/webhooks/${endpointId}`, { body: { enabled: false } });
    const refused = await api.call('POST', `${ws()}/webhooks/deliveries/${id}/replay`);
    expect(refused.status).toBe(409);
    expect(refused.body.tag).toBe('EndpointDisabled');
    const reenabled = await api.call('PATCH', `${ws()}/webhooks/${endpointId}`, { body: { enabled: true } });
    expect(reenabled.body.consecutiveFailures).toBe(0);

    failing = false;
    const replay = await api.call('POST', `${ws()}/webhooks/deliveries/${id}/replay`);
    expect(replay.status).toBe(202);
    expect(replay.body).toMatchObject({
      status: 'pending',
      attempts: 0,
      replayedFrom: id,
      eventType: 'webhook.test_event',
      payload: dead.body.payload,
    });
    expect(replay.body.deliveryId).not.toBe(id);
    await expect
      .poll(async () => (await delivery(replay.body.deliveryId)).body.status, { ...EVENTUALLY, message: 'replay status' })
      .toBe('delivered');
    expect((await delivery(id)).body.status).toBe('dead_lettered');
    const audit = await api.call('GET', `${ws()}/audit-events?limit=10`);
    expect(audit.body.items).toContainEqual(
      expect.objectContaining({ action: 'webhook.delivery_replayed', targetId: replay.body.deliveryId }),
    );

    // A delivered or pending delivery is not replayable.
    const again = await api.call('POST', `${ws()}/webhooks/deliveries/${replay.body.deliveryId}/replay`);
    expect(again.status).toBe(409);
    expect(again.body.tag).toBe('DeliveryNotReplayable');
  });
});

describe('isolation and permissions', () => {
  it('a read token lists deliveries; attempts need webhook:list; another workspace sees 404', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end());
    const { endpointId } = await endpointTo(r.url);
    const id = (await api.call('POST', `${ws()}/webhooks/${endpointId}/test-event`)).body.deliveryId as string;
    const { issueToken, ensureWorkspace } = await import('../../lambdas/operations/admin');
    const { token: reader } = await issueToken(api.table, api.workspace, { name: 'r', scopes: ['read'] });
    expect((await api.call('GET', `${ws()}/webhooks/${endpointId}/deliveries`, { token: reader })).status).toBe(200);
    const { token: narrow } = await issueToken(api.table, api.workspace, { name: 'n', scopes: ['webhook:read'] });
    expect((await api.call('GET', `${ws()}/webhooks/deliveries/${id}/attempts`, { token: narrow })).status).toBe(403);
    expect((await api.call('POST', `${ws()}/webhooks/deliveries/${id}/replay`, { token: reader })).status).toBe(403);

    await ensureWorkspace(api.table, 'zulu', 'Zulu');
    const { token: zulu } = await issueToken(api.table, 'zulu', { name: 'z', scopes: ['admin'] });
    for (const path of [`/webhooks/deliveries/${id}`, `/webhooks/deliveries/${id}/attempts`, `/webhooks/${endpointId}/deliveries`]) {
      const res = await api.call('GET', `/workspaces/zulu${path}`, { token: zulu });
      expect([path, res.status, res.body.tag]).toEqual([path, 404, path.endsWith('/deliveries') ? 'EndpointNotFound' : 'DeliveryNotFound']);
      expect(res.text).not.toMatch(/payload|127\.0\.0\.1|test_event/);
    }
    expect((await api.call('POST', `/workspaces/zulu/webhooks/deliveries/${id}/replay`, { token: zulu })).status).toBe(404);
  });
});
