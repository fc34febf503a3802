/**
 * Endpoint health from the pipeline's counters (docs/behaviour.md#endpoint-health), against
 * real loopback receivers and DynamoDB Local with an injected clock: what each outcome adds,
 * that a duplicate receive counts once, dead-lettering, the 24 h and 7 d windows, and the
 * summaries on endpoints and the overview.
 */
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BatchHealth } from '../../lambdas/pipeline/batch-health';
import { MAX_REQUEUES } from '../../lambdas/domain/delivery-lifecycle';
import { deadLetterDelivery } from '../../lambdas/pipeline/dead-letter';
import { dispatchDelivery, type DispatchDeps } from '../../lambdas/pipeline/dispatcher';
import { createHttpSender } from '../../lambdas/pipeline/http-sender';
import { publishEvent } from '../../lambdas/pipeline/publisher';
import type { OperationDeps } from '../../lambdas/operations/context';
import { getWebhookHealth } from '../../lambdas/operations/health';
import { getWebhook, listWebhooks, updateWebhook } from '../../lambdas/operations/webhooks';
import { getWorkspaceOverview } from '../../lambdas/operations/workspace';
import { getDelivery } from '../../lambdas/store/deliveries';
import { updateEndpoint } from '../../lambdas/store/endpoints';
import { capturingQueue, seedEndpoint, testCatalogue, testSealer } from '../helpers/pipeline';
import { scriptedReceiver } from '../helpers/scripted-receiver';
import { freshTable } from '../helpers/table';

/**
 * The test's dates are written as of 2026-11-26 and shifted by whole days to today: health counters carry an
 * 8-day TTL and DynamoDB Local removes expired items, so fixed dates would stop working a week later.
 */
const DAY_MS = 86_400_000;
const SHIFT_MS = (Math.floor(Date.now() / DAY_MS) - Math.floor(Date.parse('2026-11-26T00:00:00.000Z') / DAY_MS)) * DAY_MS;
const at = (written: string) => new Date(Date.parse(written) + SHIFT_MS);
const iso = (written: string) => at(written).toISOString();

let table: Awaited<ReturnType<typeof freshTable>>;
const stops: (() => Promise<void>)[] = [];
let clock = at('2026-11-25T12:10:00.000Z');

beforeAll(async () => {
  table = await freshTable();
});
afterEach(async () => {
  await Promise.all(stops.splice(0).map((s) => s()));
});
afterAll(async () => {
  await table?.drop();
});

function deps(): DispatchDeps {
  return {
    table,
    now: () => clock,
    sender: createHttpSender({ deadlineMs: 400, bodyReadMs: 200, bodyCapBytes: 2048 }),
    resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    urlPolicy: { allowLoopback: true },
    secrets: testSealer,
  };
}

function opDeps(): OperationDeps {
  return {
    table,
    now: () => clock,
    eventTypes: testCatalogue,
    urlPolicy: { allowLoopback: true },
    queue: capturingQueue(),
    secretSealer: testSealer,
  };
}

const caller = (workspace: string) => ({ workspace, tokenId: 'tok_test', scopes: ['admin'] });

async function receiver(respond: Parameters<typeof scriptedReceiver>[0]) {
  const r = await scriptedReceiver(respond);
  stops.push(() => r.stop());
  return r;
}

let n = 0;
/** A new workspace with one endpoint at `url`. */
async function endpointAt(url: string, extra: { enabled?: boolean } = {}) {
  const workspace = `hw-${++n}`;
  const endpoint = await seedEndpoint(table, { workspace, url, ...extra }, clock);
  return { workspace, endpointId: endpoint.endpointId };
}

/** Publishes one event to the workspace; the delivery ids. */
async function publish(workspace: string, count = 1): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const { deliveryIds } = await publishEvent(
      { table, queue: capturingQueue(), eventTypes: testCatalogue, now: () => clock },
      { workspace, type: 'order.shipped', payload: { orderId: `o-${i}` } },
    );
    ids.push(...deliveryIds);
  }
  return ids;
}

/** Dispatches the ids as one batch (concurrently, as the Lambda entry does) and adds the batch's counts. */
async function batch(ids: readonly string[]) {
  const health = new BatchHealth();
  const results = await Promise.all(ids.map((id) => dispatchDelivery(deps(), id)));
  for (const r of results) health.add(r.recorded);
  await health.flush(table);
  return results;
}

const health = (workspace: string, endpointId: string, window: '24h' | '7d' = '24h') =>
  getWebhookHealth(opDeps(), caller(workspace), { params: { slug: workspace, endpointId }, query: { window }, body: undefined });

describe('what each outcome adds', () => {
  it('2xx, 5xx, 3xx, a timeout and a network error land in their own keys', async () => {
    let i = 0;
    // Per request: 200, 503, 302, then silence (a timeout).
    const r = await receiver((_req, res) => {
      const k = ++i;
      if (k === 1) res.writeHead(200).end();
      else if (k === 2) res.writeHead(503).end();
      else if (k === 3) res.writeHead(302, { location: 'https://elsewhere.example.com/' }).end();
    });
    const { workspace, endpointId } = await endpointAt(r.url);
    for (let k = 0; k < 4; k++) await batch(await publish(workspace));

    // A closed port: connection refused.
    const gone = await scriptedReceiver(() => undefined);
    await gone.stop();
    const closed = await endpointAt(gone.url);
    await batch(await publish(closed.workspace));

    const h = await health(workspace, endpointId);
    expect(h).toMatchObject({
      endpointId,
      window: '24h',
      attempts: 4,
      delivered: 1,
      failed: 3,
      failedPermanent: 1,
      deadLettered: 0,
      successRate: 0.25,
    });
    expect(h.byResponseStatus).toEqual({ '200': 1, '503': 1, '302': 1, timeout: 1 });
    expect(h.latencyMs.p50).not.toBeNull();
    expect(h.latencyMs.p95).toBeGreaterThanOrEqual(400);
    expect(h.series.at(-1)).toEqual({ start: iso('2026-11-25T12:00:00.000Z'), delivered: 1, failed: 3 });

    const c = await health(closed.workspace, closed.endpointId);
    expect(c).toMatchObject({ attempts: 1, delivered: 0, failed: 1, failedPermanent: 0, successRate: 0 });
    expect(c.byResponseStatus).toEqual({ network_error: 1 });
  });

  it('a URL refused at dispatch is a permanent network_error attempt; a disabled endpoint’s bookkeeping is no attempt', async () => {
    const refused = await endpointAt('http://127.0.0.1:9/hook');
    const ids = await publish(refused.workspace);
    const res = await dispatchDelivery({ ...deps(), urlPolicy: { allowLoopback: false } }, ids[0]!);
    const tally = new BatchHealth();
    tally.add(res.recorded);
    await tally.flush(table);
    expect(await health(refused.workspace, refused.endpointId)).toMatchObject({
      attempts: 1,
      failed: 1,
      failedPermanent: 1,
      byResponseStatus: { network_error: 1 },
    });

    const r = await receiver((_req, res2) => res2.writeHead(200).end());
    const off = await endpointAt(r.url);
    const held = await publish(off.workspace);
    // Disabled as an operator does it (the store's update also turns off its subscription items).
    await updateEndpoint(table, off.workspace, off.endpointId, { enabled: false }, clock, {
      action: 'webhook.updated',
      actor: 'test',
      targetId: off.endpointId,
    });
    const [result] = await batch(held);
    expect(result).toMatchObject({ kind: 'ack', reason: 'endpoint_disabled' });
    // Published while disabled: held by the publisher, never dispatched, never counted.
    const later = await publishEvent(
      { table, queue: capturingQueue(), eventTypes: testCatalogue, now: () => clock },
      { workspace: off.workspace, type: 'order.shipped', payload: { orderId: 'held' } },
    );
    expect(later.heldDeliveryIds).toHaveLength(1);
    expect(await health(off.workspace, off.endpointId)).toMatchObject({
      attempts: 0,
      failed: 0,
      failedPermanent: 0,
      deadLettered: 0,
      successRate: null,
      byResponseStatus: {},
    });
  });

  it('a protocol switch and a status outside 100–599 are permanent, never retried, counted under their reasons', async () => {
    // Raw answers no HTTP server library would send: a 101 (with and without Upgrade) and a 999.
    const answers = [
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n',
      'HTTP/1.1 101 Switching Protocols\r\n\r\n',
      'HTTP/1.1 999 Strange\r\nContent-Length: 0\r\n\r\n',
    ];
    let i = 0;
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      const answer = answers[i++ % answers.length]!;
      socket.once('data', () => socket.write(answer));
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    stops.push(async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((ok) => server.close(() => ok()));
    });
    const { workspace, endpointId } = await endpointAt(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
    const results = [];
    for (let k = 0; k < answers.length; k++) results.push(...(await batch(await publish(workspace))));
    expect(results.map((r) => r.kind)).toEqual(['ack', 'ack', 'ack']);
    const rows = await Promise.all(results.map((r) => getDelivery(table, r.delivery!.deliveryId)));
    expect(rows.map((r) => [r?.status, r?.lastError, r?.lastResponseStatus, r?.nextAttemptAt])).toEqual([
      ['failed_permanent', 'protocol_upgrade', 101, null],
      ['failed_permanent', 'protocol_upgrade', 101, null],
      ['failed_permanent', 'invalid_status', 999, null],
    ]);
    const h = await health(workspace, endpointId);
    expect(h).toMatchObject({ attempts: 3, failed: 3, failedPermanent: 3 });
    expect(h.byResponseStatus).toEqual({ protocol_upgrade: 2, invalid_status: 1 });
  });

  it('has a null success rate and no latency with no attempts; 404 for an unknown endpoint', async () => {
    const { workspace, endpointId } = await endpointAt('https://hooks.example.com/quiet');
    const h = await health(workspace, endpointId);
    expect(h).toMatchObject({
      attempts: 0,
      delivered: 0,
      failed: 0,
      failedPermanent: 0,
      deadLettered: 0,
      successRate: null,
      latencyMs: { p50: null, p95: null },
      byResponseStatus: {},
    });
    expect(h.series).toHaveLength(24);
    await expect(health(workspace, 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC')).rejects.toMatchObject({ tag: 'EndpointNotFound' });
  });
});

describe('a duplicate receive', () => {
  it('the same message dispatched twice concurrently, then again late, counts once', async () => {
    const r = await receiver((_req, res) => setTimeout(() => res.writeHead(200).end(), 50));
    const { workspace, endpointId } = await endpointAt(r.url);
    const [id] = await publish(workspace);
    // Two receives of one message in the same batch, racing.
    const results = await batch([id!, id!]);
    expect(results.filter((x) => x.recorded)).toHaveLength(1);
    // A late third receive in another batch.
    const late = await batch([id!]);
    expect(late[0]).toMatchObject({ kind: 'ack', reason: 'already_terminal' });
    expect(late[0]!.recorded).toBeUndefined();
    expect(await getDelivery(table, id!)).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(await health(workspace, endpointId)).toMatchObject({
      attempts: 1,
      delivered: 1,
      successRate: 1,
      byResponseStatus: { '200': 1 },
    });
  });
});

describe('dead-lettering', () => {
  it('counts each marked delivery once, in the same counters', async () => {
    const r = await receiver((_req, res) => res.writeHead(500).end());
    const { workspace, endpointId } = await endpointAt(r.url);
    const ids = await publish(workspace, 2);
    // One failed attempt each, then their messages are given up by the queue as often as it may be: marked.
    await batch(ids);
    const tally = new BatchHealth();
    for (const id of [...ids, ids[0]!]) {
      const res = await deadLetterDelivery({ table, now: () => clock }, id, MAX_REQUEUES);
      if (res.kind === 'dead_lettered') tally.add(res.recorded);
    }
    await tally.flush(table);
    expect(await health(workspace, endpointId)).toMatchObject({ attempts: 2, failed: 2, deadLettered: 2, successRate: 0 });
    const overview = await getWorkspaceOverview(opDeps(), caller(workspace), {
      params: { slug: workspace },
      query: undefined,
      body: undefined,
    });
    expect(overview.deliveries24h).toEqual({ delivered: 0, failed: 2, deadLettered: 2 });
  });
});

describe('windows', () => {
  it('24h counts the last 24 hourly buckets, 7d the last 7 days in daily buckets', async () => {
    const r = await receiver((req, res) => res.writeHead(JSON.parse(req.body).payload.orderId === 'o-1' ? 503 : 200).end());
    const { workspace, endpointId } = await endpointAt(r.url);
    const saved = clock;
    try {
      // Three days ago: one delivered; 30 hours ago: one delivered and one failed; 2 hours ago: two delivered; now: one delivered.
      clock = at('2026-11-22T09:15:00.000Z');
      await batch(await publish(workspace, 1));
      clock = at('2026-11-24T06:10:00.000Z');
      await batch(await publish(workspace, 2));
      clock = at('2026-11-25T10:05:00.000Z');
      await batch(await publish(workspace, 1));
      await batch(await publish(workspace, 1));
      clock = at('2026-11-25T12:20:00.000Z');
      await batch(await publish(workspace, 1));

      const day = await health(workspace, endpointId, '24h');
      expect(day).toMatchObject({
        from: iso('2026-11-24T13:00:00.000Z'),
        to: iso('2026-11-25T12:20:00.000Z'),
        attempts: 3,
        delivered: 3,
        failed: 0,
        successRate: 1,
      });
      expect(day.series).toHaveLength(24);
      expect(day.series.filter((b) => b.delivered + b.failed > 0)).toEqual([
        { start: iso('2026-11-25T10:00:00.000Z'), delivered: 2, failed: 0 },
        { start: iso('2026-11-25T12:00:00.000Z'), delivered: 1, failed: 0 },
      ]);

      const week = await health(workspace, endpointId, '7d');
      expect(week).toMatchObject({
        from: iso('2026-11-19T00:00:00.000Z'),
        attempts: 6,
        delivered: 5,
        failed: 1,
        successRate: 0.8333,
        byResponseStatus: { '200': 5, '503': 1 },
      });
      expect(week.series.map((b) => [b.start, b.delivered, b.failed])).toEqual([
        [iso('2026-11-19T00:00:00.000Z'), 0, 0],
        [iso('2026-11-20T00:00:00.000Z'), 0, 0],
        [iso('2026-11-21T00:00:00.000Z'), 0, 0],
        [iso('2026-11-22T00:00:00.000Z'), 1, 0],
        [iso('2026-11-23T00:00:00.000Z'), 0, 0],
        [iso('2026-11-24T00:00:00.000Z'), 1, 1],
        [iso('2026-11-25T00:00:00.000Z'), 3, 0],
      ]);

      // The endpoint shows its 24 h rate and last attempt on get, list and update.
      const expected = { successRate24h: 1, lastAttemptAt: iso('2026-11-25T12:20:00.000Z') };
      expect(
        (await getWebhook(opDeps(), caller(workspace), { params: { slug: workspace, endpointId }, query: undefined, body: undefined }))
          .health,
      ).toEqual(expected);
      const page = await listWebhooks(opDeps(), caller(workspace), { params: { slug: workspace }, query: { limit: 10 }, body: undefined });
      expect(page.items.map((e) => e.health)).toEqual([expected]);
      const updated = await updateWebhook(opDeps(), caller(workspace), {
        params: { slug: workspace, endpointId },
        query: undefined,
        body: { description: 'watched' },
      });
      expect(updated.health).toEqual(expected);
      expect(
        (await getWorkspaceOverview(opDeps(), caller(workspace), { params: { slug: workspace }, query: undefined, body: undefined }))
          .deliveries24h,
      ).toEqual({
        delivered: 3,
        failed: 0,
        deadLettered: 0,
      });

      // A day later nothing is in the last 24 h; the last attempt is still shown within the 7 days.
      clock = at('2026-11-26T13:00:00.000Z');
      expect(
        (await getWebhook(opDeps(), caller(workspace), { params: { slug: workspace, endpointId }, query: undefined, body: undefined }))
          .health,
      ).toEqual({
        successRate24h: null,
        lastAttemptAt: iso('2026-11-25T12:20:00.000Z'),
      });
      // Past the 7-day window nothing is shown at all.
      clock = at('2026-12-03T00:00:00.000Z');
      expect(
        (await getWebhook(opDeps(), caller(workspace), { params: { slug: workspace, endpointId }, query: undefined, body: undefined }))
          .health,
      ).toEqual({
        successRate24h: null,
        lastAttemptAt: null,
      });
    } finally {
      clock = saved;
    }
  });
});
