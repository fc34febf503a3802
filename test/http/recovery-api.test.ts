/**
 * Held deliveries and recovery jobs end to end in the real local stack: an
 * event published while the endpoint is disabled is held, then recovered after
 * re-enabling by a job on the in-process jobs queue and delivered to a loopback
 * receiver; the dry run, the job through REST, cancel, and the refusals.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { scriptedReceiver } from '../helpers/scripted-receiver';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((s) => s()));
});

async function receiver() {
  const r = await scriptedReceiver((_req, res) => res.writeHead(200).end('ok'));
  stops.push(() => r.stop());
  return r;
}

/** How long the pipeline gets to reach a state, and how often it is looked at. */
const EVENTUALLY = { timeout: 15_000, interval: 25 };

async function disabledEndpoint(api: TestApi, url: string) {
  const ws = `/workspaces/${api.workspace}`;
  const created = await api.call('POST', `${ws}/webhooks`, { body: { url, eventTypes: ['order.shipped'] } });
  expect(created.status).toBe(201);
  const endpointId = created.body.endpointId as string;
  expect((await api.call('PATCH', `${ws}/webhooks/${endpointId}`, { body: { enabled: false } })).status).toBe(200);
  return endpointId;
}

async function publish(api: TestApi, orderId: string) {
  const res = await fetch(`${api.apiUrl}/local/events`, {
    method: 'POST',
    body: JSON.stringify({ workspace: api.workspace, type: 'order.shipped', payload: { orderId } }),
  });
  expect(res.status).toBe(202);
  return (await res.json()) as { deliveryIds: string[]; heldDeliveryIds: string[] };
}

describe('held deliveries and recovery (fast time)', () => {
  let api: TestApi;
  const ws = () => `/workspaces/${api.workspace}`;
  beforeAll(async () => {
    // Slice delays of 1 s become 1 ms.
    api = await startTestApi({ timeScale: 1000, schedules: false, onPipelineError: () => undefined });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('holds an event published while the endpoint is disabled, and a recovery after re-enabling delivers it', async () => {
    const r = await receiver();
    const endpointId = await disabledEndpoint(api, r.url);
    const since = new Date(Date.now() - 1000).toISOString();
    const published = await publish(api, 'held-1');
    expect(published.heldDeliveryIds).toHaveLength(1);
    const heldId = published.heldDeliveryIds[0]!;

    const list = await api.call('GET', `${ws()}/webhooks/${endpointId}/deliveries`);
    expect(list.body.items).toEqual([
      expect.objectContaining({
        deliveryId: heldId,
        status: 'failed_permanent',
        attempts: 0,
        lastError: 'endpoint_disabled',
        payload: { orderId: 'held-1' },
      }),
    ]);

    // While disabled: 409, dry run included.
    const refused = await api.call('POST', `${ws()}/webhooks/${endpointId}/recover`, { body: { since, dryRun: true } });
    expect(refused.status).toBe(409);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ tag: 'EndpointDisabled' });

    expect((await api.call('PATCH', `${ws()}/webhooks/${endpointId}`, { body: { enabled: true } })).status).toBe(200);
    const dry = await api.call('POST', `${ws()}/webhooks/${endpointId}/recover`, { body: { since, dryRun: true } });
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({ matched: 1, matchedAtLeast: false, skippedReplayed: 0 });
    expect(r.seen).toHaveLength(0);

    const started = await api.call('POST', `${ws()}/webhooks/${endpointId}/recover`, { body: { since } });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({
      kind: 'recover',
      endpointId,
      status: 'running',
      since,
      matched: 1,
      replayed: 0,
      skipped: 0,
      statuses: ['failed_permanent', 'dead_lettered'],
      finishedAt: null,
    });
    const jobId = started.body.jobId as string;

    const done = await vi.waitFor(async () => {
      const job = await api.call('GET', `${ws()}/jobs/${jobId}`);
      expect(job.body.status, 'job status').toBe('completed');
      return job;
    }, EVENTUALLY);
    expect(done.body).toMatchObject({ matched: 1, replayed: 1, skipped: 0 });
    await vi.waitFor(() => expect(r.seen).toHaveLength(1), EVENTUALLY);
    const body = JSON.parse(r.seen[0]!.body) as { deliveryId: string; payload: unknown };
    expect(body.payload).toEqual({ orderId: 'held-1' });
    const replay = await vi.waitFor(async () => {
      const d = await api.call('GET', `${ws()}/webhooks/deliveries/${body.deliveryId}`);
      expect(d.body.status).toBe('delivered');
      return d;
    }, EVENTUALLY);
    expect(replay.body).toMatchObject({ replayedFrom: heldId, attempts: 1 });
    // The held source stays as it was.
    expect((await api.call('GET', `${ws()}/webhooks/deliveries/${heldId}`)).body).toMatchObject({
      status: 'failed_permanent',
      attempts: 0,
    });

    const audit = (await api.call('GET', `${ws()}/audit-events?limit=20`)).body.items.map((a: { action: string }) => a.action);
    expect(audit).toEqual(expect.arrayContaining(['webhook.recovery_started', 'webhook.delivery_replayed', 'webhook.recovery_finished']));
  });

  it.each([
    ['an unknown status', { since: '2026-01-01T00:00:00Z', statuses: ['delivered'] }],
    ['pending', { since: '2026-01-01T00:00:00Z', statuses: ['pending'] }],
    ['no status', { since: '2026-01-01T00:00:00Z', statuses: [] }],
    ['since after until', { since: '2026-02-01T00:00:00Z', until: '2026-01-01T00:00:00Z' }],
    ['no since', { dryRun: true }],
    ['a since that is no date-time', { since: 'yesterday' }],
  ])('refuses %s with 400', async (_name, body) => {
    const r = await receiver();
    const created = await api.call('POST', `${ws()}/webhooks`, { body: { url: r.url, eventTypes: ['order.shipped'] } });
    const res = await api.call('POST', `${ws()}/webhooks/${created.body.endpointId}/recover`, { body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ tag: 'ValidationError' });
    expect(res.body.issues.length).toBeGreaterThan(0);
  });

  it('clamps a since before 1970 to 1970, as the delivery log does, on REST and MCP (never a 500)', async () => {
    const r = await receiver();
    const endpointId = await disabledEndpoint(api, r.url);
    await publish(api, 'old-1');
    expect((await api.call('PATCH', `${ws()}/webhooks/${endpointId}`, { body: { enabled: true } })).status).toBe(200);
    for (const since of ['1969-12-31T23:59:59Z', '0001-01-01T00:00:00Z']) {
      const dry = await api.call('POST', `${ws()}/webhooks/${endpointId}/recover`, { body: { since, dryRun: true } });
      expect(dry.status, since).toBe(200);
      expect(dry.body).toEqual({ matched: 1, matchedAtLeast: false, skippedReplayed: 0 });
    }
    const log = await api.call('GET', `${ws()}/deliveries?since=1969-12-31T23:59:59Z&endpointId=${endpointId}`);
    expect(log.body.items).toHaveLength(1);
    const started = await api.call('POST', `${ws()}/webhooks/${endpointId}/recover`, { body: { since: '1969-12-31T23:59:59Z' } });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ since: '1970-01-01T00:00:00.000Z', matched: 1 });
    await vi.waitFor(async () => {
      expect((await api.call('GET', `${ws()}/jobs/${started.body.jobId}`)).body.status).toBe('completed');
    }, EVENTUALLY);
  });

  it('answers 404 for an unknown job and for a job of another id shape', async () => {
    const unknown = await api.call('GET', `${ws()}/jobs/whj_01JD2YC5D6E7F8G9H0J1K2M3NP`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ tag: 'JobNotFound' });
    expect((await api.call('POST', `${ws()}/jobs/whj_01JD2YC5D6E7F8G9H0J1K2M3NP/cancel`)).body).toMatchObject({ tag: 'JobNotFound' });
    expect((await api.call('GET', `${ws()}/jobs/nope`)).status).toBe(400);
  });
});

describe('a running recovery (real time)', () => {
  let api: TestApi;
  const ws = () => `/workspaces/${api.workspace}`;
  beforeAll(async () => {
    api = await startTestApi({ schedules: false, onPipelineError: () => undefined });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('allows one running recovery per endpoint (409), and cancel stops it (200, the job)', async () => {
    const r = await receiver();
    const endpointId = await disabledEndpoint(api, r.url);
    const since = new Date(Date.now() - 1000).toISOString();
    // More held rows than one slice replays (20 per second), so the job outlives the first second.
    for (let i = 0; i < 45; i++) await publish(api, `o-${i}`);
    expect((await api.call('PATCH', `${ws()}/webhooks/${endpointId}`, { body: { enabled: true } })).status).toBe(200);

    const started = await api.call('POST', `${ws()}/webhooks/${endpointId}/recover`, { body: { since } });
    expect(started.status).toBe(202);
    expect(started.body.matched).toBe(45);
    const second = await api.call('POST', `${ws()}/webhooks/${endpointId}/recover`, { body: { since } });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ tag: 'RecoveryInProgress' });
    expect(second.body.detail).toContain(started.body.jobId);

    const cancelled = await api.call('POST', `${ws()}/jobs/${started.body.jobId}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ jobId: started.body.jobId, status: 'cancelled', matched: 45 });
    expect(cancelled.body.replayed).toBeLessThan(45);
    // Nothing is replayed after the cancel: the count stays where it was.
    const later = await vi.waitFor(async () => {
      const job = await api.call('GET', `${ws()}/jobs/${started.body.jobId}`);
      expect(job.body.status).toBe('cancelled');
      return job;
    }, EVENTUALLY);
    expect(later.body.replayed).toBe(cancelled.body.replayed);
    // A read-scope token may read the job but not cancel it.
    const read = await api.call('POST', `${ws()}/api-tokens`, { body: { name: 'reader', scopes: ['read'] } });
    expect((await api.call('GET', `${ws()}/jobs/${started.body.jobId}`, { token: read.body.token })).status).toBe(200);
    expect((await api.call('POST', `${ws()}/jobs/${started.body.jobId}/cancel`, { token: read.body.token })).status).toBe(403);
  });
});
