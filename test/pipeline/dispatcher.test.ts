/**
 * The dispatcher against real loopback receivers and DynamoDB Local: every
 * outcome of docs/behaviour.md#status-transitions and docs/behaviour.md#retries-and-backoff, evidence, signatures (verified with the
 * `standardwebhooks` library), the streak, and duplicate observations.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { dispatchDelivery, type DispatchDeps } from '../../lambdas/pipeline/dispatcher';
import { createDnsResolver } from '../../lambdas/pipeline/dns-resolver';
import { createHttpSender } from '../../lambdas/pipeline/http-sender';
import { publishEvent } from '../../lambdas/pipeline/publisher';
import { getDelivery, listAttempts } from '../../lambdas/store/deliveries';
import { getEndpointRecord } from '../../lambdas/store/endpoints';
import { listAuditEvents } from '../../lambdas/store/audit';
import { listNotifications } from '../../lambdas/store/notifications';
import { RCODE, scriptedDnsServer, type DnsAnswer } from '../helpers/dns-server';
import { capturingQueue, SEEDED_SECRET, sealedSecrets, seedEndpoint, testCatalogue, testSealer } from '../helpers/pipeline';
import { scriptedReceiver } from '../helpers/scripted-receiver';
import { freshTable } from '../helpers/table';
import { SecretSealerMissing, secretSealerFromEnv } from '../../lambdas/composition/runtime';
import { mintSecret, rotateSecrets } from '../../lambdas/domain/secrets';
import { localSecretSealer } from '../../lambdas/store/secret-sealing';

let table: Awaited<ReturnType<typeof freshTable>>;
const stops: (() => Promise<void>)[] = [];
// Real time: receivers verify `webhook-timestamp` against their clock (5 min tolerance).
let clock = new Date();

beforeAll(async () => {
  table = await freshTable();
});
afterEach(async () => {
  await Promise.all(stops.splice(0).map((s) => s()));
});
afterAll(async () => {
  await table?.drop();
});

function deps(overrides: Partial<DispatchDeps> = {}): DispatchDeps {
  return {
    table,
    now: () => clock,
    sender: createHttpSender({ deadlineMs: 1500, bodyReadMs: 300, bodyCapBytes: 2048 }),
    resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    urlPolicy: { allowLoopback: true },
    secrets: testSealer,
    ...overrides,
  };
}

async function receiver(respond: Parameters<typeof scriptedReceiver>[0]) {
  const r = await scriptedReceiver(respond);
  stops.push(() => r.stop());
  return r;
}

let n = 0;
async function published(url: string, extra: Parameters<typeof seedEndpoint>[1] extends infer T ? Partial<T> : never = {}) {
  const workspace = `ws-${++n}`;
  const endpoint = await seedEndpoint(table, { workspace, url, ...extra }, clock);
  const queue = capturingQueue();
  const { deliveryIds } = await publishEvent(
    { table, queue, eventTypes: testCatalogue, now: () => clock },
    { workspace, type: 'order.shipped', payload: { orderId: `o-${n}` } },
  );
  expect(deliveryIds).toHaveLength(1);
  expect(queue.sent).toEqual([{ deliveryId: deliveryIds[0], endpointId: endpoint.endpointId, workspace }]);
  return { endpoint, deliveryId: deliveryIds[0]!, workspace };
}

describe('a 2xx', () => {
  it('is delivered, with a Standard Webhooks signature, the exact body and evidence', async () => {
    const r = await receiver((_req, res) => res.writeHead(204).end());
    const { deliveryId } = await published(r.url);
    const result = await dispatchDelivery(deps(), deliveryId);
    expect(result).toMatchObject({ kind: 'ack', reason: 'delivered' });

    const req = r.seen[0]!;
    expect(req.method).toBe('POST');
    expect(JSON.parse(req.body)).toEqual({ deliveryId, eventType: 'order.shipped', payload: { orderId: `o-${n}` } });
    expect(Object.keys(JSON.parse(req.body))).toEqual(['deliveryId', 'eventType', 'payload']);
    expect(req.headers['webhook-id']).toBe(deliveryId);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toMatch(/webhook-delivery-service/);
    expect(req.headers['x-trace-id']).toBeTruthy();
    const verified = new Webhook(SEEDED_SECRET).verify(req.body, {
      'webhook-id': String(req.headers['webhook-id']),
      'webhook-timestamp': String(req.headers['webhook-timestamp']),
      'webhook-signature': String(req.headers['webhook-signature']),
    });
    expect(verified).toEqual(JSON.parse(req.body));
    expect(Number(req.headers['webhook-timestamp'])).toBe(Math.floor(clock.getTime() / 1000));

    const summary = await getDelivery(table, deliveryId);
    expect(summary).toMatchObject({
      status: 'delivered',
      attempts: 1,
      lastResponseStatus: 204,
      lastError: null,
      nextAttemptAt: null,
      payload: { orderId: `o-${n}` },
    });
    const attempts = await listAttempts(table, deliveryId, 10);
    expect(attempts.items).toEqual([
      expect.objectContaining({
        ordinal: 1,
        outcome: 'delivered',
        responseStatus: 204,
        failureReason: null,
        requestHeaders: expect.objectContaining({ 'webhook-id': deliveryId }),
      }),
    ]);
    expect(attempts.items[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(attempts)).not.toContain(SEEDED_SECRET.slice(6));
  });
});

describe('sealed secrets (docs/architecture.md#secrets)', () => {
  it('signs with both secrets of a rotation’s grace window, opened by another container’s sealer; a receiver holding either verifies', async () => {
    const [original, fresh] = [mintSecret(), mintSecret()];
    // Sealed where secrets are minted, opened by the dispatcher's own sealer (its data-key cache starts empty), as deployed.
    const first = rotateSecrets([], await testSealer.seal(original), clock).secrets;
    const secrets = rotateSecrets(first, await testSealer.seal(fresh), clock).secrets;
    const r = await receiver((_req, res) => res.writeHead(204).end());
    const { deliveryId } = await published(r.url, { secrets });
    expect(await dispatchDelivery(deps({ secrets: localSecretSealer() }), deliveryId)).toMatchObject({ kind: 'ack', reason: 'delivered' });
    const req = r.seen[0]!;
    const headers = {
      'webhook-id': String(req.headers['webhook-id']),
      'webhook-timestamp': String(req.headers['webhook-timestamp']),
      'webhook-signature': String(req.headers['webhook-signature']),
    };
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const secret of [fresh, original]) expect(new Webhook(secret).verify(req.body, headers)).toEqual(JSON.parse(req.body));
  });

  it('a dispatcher not given the key cannot open a secret: nothing is sent, nothing recorded, the message comes back', async () => {
    const r = await receiver((_req, res) => res.writeHead(204).end());
    const { deliveryId } = await published(r.url);
    // The composition root's sealer where `SECRETS_KEY_ID` is unset.
    await expect(dispatchDelivery(deps({ secrets: secretSealerFromEnv({}) }), deliveryId)).rejects.toBeInstanceOf(SecretSealerMissing);
    expect(r.seen).toHaveLength(0);
    expect(await getDelivery(table, deliveryId)).toMatchObject({ status: 'pending', attempts: 0 });
  });
});

describe('retries', () => {
  it('records nextAttemptAt at the time-scaled retry on a local stack, and gives the queue the unscaled delay', async () => {
    const r = await receiver((_req, res) => res.writeHead(503).end());
    const { deliveryId } = await published(r.url);
    // ×60: the queue waits 30 s / 60, so the retry comes 0.5 s after the attempt.
    expect(await dispatchDelivery(deps({ timeScale: 60 }), deliveryId)).toMatchObject({ kind: 'retry', delaySeconds: 30 });
    expect(await getDelivery(table, deliveryId)).toMatchObject({
      status: 'failed',
      attempts: 1,
      nextAttemptAt: new Date(clock.getTime() + 500).toISOString(),
    });
  });

  it('5xx then 2xx: failed with backoff, then delivered; both attempts kept; streak back to 0', async () => {
    const r = await receiver((_req, res, i) => res.writeHead(i === 1 ? 503 : 200).end(i === 1 ? 'down for maintenance' : 'ok'));
    const { endpoint, deliveryId } = await published(r.url);
    const first = await dispatchDelivery(deps(), deliveryId);
    expect(first).toMatchObject({ kind: 'retry', delaySeconds: 30 });
    let summary = await getDelivery(table, deliveryId);
    expect(summary).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastResponseStatus: 503,
      lastError: 'http_503',
      nextAttemptAt: new Date(clock.getTime() + 30_000).toISOString(),
    });
    expect((await getEndpointRecord(table, endpoint.workspace, endpoint.endpointId))!.consecutiveFailures).toBe(1);

    const stamp1 = r.seen[0]!.headers['webhook-timestamp'];
    clock = new Date(clock.getTime() + 30_000);
    expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'ack', reason: 'delivered' });
    expect(r.seen[1]!.headers['webhook-timestamp']).not.toBe(stamp1);
    expect(r.seen[1]!.headers['webhook-id']).toBe(deliveryId);
    summary = await getDelivery(table, deliveryId);
    expect(summary).toMatchObject({ status: 'delivered', attempts: 2, lastResponseStatus: 200 });
    const attempts = (await listAttempts(table, deliveryId, 10)).items;
    expect(attempts.map((a) => [a.ordinal, a.outcome, a.responseStatus, a.responseBody])).toEqual([
      [1, 'failed', 503, 'down for maintenance'],
      [2, 'delivered', 200, 'ok'],
    ]);
    expect((await getEndpointRecord(table, endpoint.workspace, endpoint.endpointId))!.consecutiveFailures).toBe(0);
  });

  it.each([408, 429, 500, 502])('%i is retried', async (status) => {
    const r = await receiver((_req, res) => res.writeHead(status).end());
    const { deliveryId } = await published(r.url);
    expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'retry', delaySeconds: 30 });
    expect(await getDelivery(table, deliveryId)).toMatchObject({ status: 'failed', lastError: `http_${status}` });
  });

  it('the delay grows min(attempts, 6) × 30 s', async () => {
    const r = await receiver((_req, res) => res.writeHead(500).end());
    const { deliveryId } = await published(r.url);
    const delays: number[] = [];
    for (let i = 1; i <= 6; i++) {
      const res = await dispatchDelivery(deps(), deliveryId);
      expect(res.kind).toBe('retry');
      if (res.kind === 'retry') delays.push(res.delaySeconds);
    }
    expect(delays).toEqual([30, 60, 90, 120, 150, 180]);
    // The 7th attempt is the last: no next attempt; the message goes to the dead-letter queue.
    const last = await dispatchDelivery(deps(), deliveryId);
    expect(last).toMatchObject({ kind: 'dead_letter' });
    expect(await getDelivery(table, deliveryId)).toMatchObject({ status: 'failed', attempts: 7, nextAttemptAt: null });
    // Received again before the dead-letter consumer marked it (its send failed): no eighth attempt.
    const seen = r.seen.length;
    expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'dead_letter' });
    expect(r.seen).toHaveLength(seen);
  });
});

describe('permanent failures', () => {
  it('a 4xx is failed_permanent and acked', async () => {
    const r = await receiver((_req, res) => res.writeHead(410).end('gone'));
    const { deliveryId } = await published(r.url);
    expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'ack', reason: 'failed_permanent' });
    expect(await getDelivery(table, deliveryId)).toMatchObject({
      status: 'failed_permanent',
      lastResponseStatus: 410,
      nextAttemptAt: null,
    });
  });

  it('a 3xx is not followed', async () => {
    const target = await receiver((_req, res) => res.writeHead(200).end());
    const r = await receiver((_req, res) => res.writeHead(307, { location: target.url }).end());
    const { deliveryId } = await published(r.url);
    expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'ack', reason: 'failed_permanent' });
    expect(target.seen).toHaveLength(0);
    expect(await getDelivery(table, deliveryId)).toMatchObject({
      status: 'failed_permanent',
      lastResponseStatus: 307,
      lastError: 'redirect_not_followed_307',
    });
  });

  it('a URL that fails dispatch-time validation sends nothing', async () => {
    const { deliveryId } = await published('https://10.0.0.7/hook');
    const sent: unknown[] = [];
    const result = await dispatchDelivery(
      deps({ sender: async (x) => (sent.push(x), { kind: 'response', status: 200, body: null, durationMs: 1 }) }),
      deliveryId,
    );
    expect(result).toMatchObject({ kind: 'ack', reason: 'failed_permanent' });
    expect(sent).toHaveLength(0);
    expect((await getDelivery(table, deliveryId))!.lastError).toMatch(/^invalid_url/);
  });

  it('a host that resolves to a private address is refused; a public one is pinned (no second lookup)', async () => {
    const { deliveryId } = await published('https://hooks.example.test/x');
    const logged: unknown[] = [];
    const log = { warn: (message: string, attributes: Record<string, unknown>) => void logged.push({ message, ...attributes }) };
    const refused = await dispatchDelivery(
      deps({
        log,
        resolve: async () => [
          { address: '93.184.216.34', family: 4 },
          { address: '10.1.1.1', family: 4 },
        ],
      }),
      deliveryId,
    );
    expect(refused).toMatchObject({ kind: 'ack', reason: 'failed_permanent' });
    // The evidence is the tenant's: it says the destination was refused, never what our resolver answered.
    expect(await getDelivery(table, deliveryId)).toMatchObject({ status: 'failed_permanent', lastError: 'destination_not_public' });
    const evidence = (await listAttempts(table, deliveryId, 10)).items;
    expect(evidence).toEqual([
      expect.objectContaining({ outcome: 'failed_permanent', failureReason: 'destination_not_public', responseStatus: null }),
    ]);
    expect(JSON.stringify(evidence)).not.toContain('10.1.1.1');
    // The operator's log has the detail.
    expect(logged).toEqual([expect.objectContaining({ deliveryId, host: 'hooks.example.test', address: '10.1.1.1' })]);

    // Pinning: the connection goes to the checked address, whatever the name resolves to later.
    const r = await receiver((_req, res) => res.writeHead(200).end());
    const { deliveryId: second } = await published(`http://localhost:${r.port}/pinned`);
    let lookups = 0;
    const ok = await dispatchDelivery(deps({ resolve: async () => (lookups++, [{ address: '127.0.0.1', family: 4 }]) }), second);
    expect(ok).toMatchObject({ reason: 'delivered' });
    expect(lookups).toBe(1);
    expect(r.seen[0]!.headers.host).toBe(`localhost:${r.port}`);
  });
});

describe('slow, huge and broken receivers', () => {
  it('a receiver that never answers is a timeout (retried)', async () => {
    await receiver(() => undefined).then(async (r) => {
      const { deliveryId } = await published(r.url);
      const started = Date.now();
      expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'retry' });
      expect(Date.now() - started).toBeLessThan(5000);
      expect(await getDelivery(table, deliveryId)).toMatchObject({ status: 'failed', lastError: 'timeout', lastResponseStatus: null });
    });
  });

  it('a slow body is stored as absent after its own read deadline; the status still counts', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('x');
      // never ends
    });
    const { deliveryId } = await published(r.url);
    expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ reason: 'delivered' });
    const [attempt] = (await listAttempts(table, deliveryId, 1)).items;
    expect(attempt).toMatchObject({ responseStatus: 200, responseBody: null });
  });

  it('a 10 MB body keeps a 2 KiB prefix and reads no more', async () => {
    let written = 0;
    const r = await receiver((_req, res) => {
      res.writeHead(500, { 'content-length': String(10 * 1024 * 1024) });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const pump = () => {
        while (written < 10 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('error', () => undefined);
      pump();
    });
    const { deliveryId } = await published(r.url);
    const heapBefore = process.memoryUsage().heapUsed;
    expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'retry' });
    const [attempt] = (await listAttempts(table, deliveryId, 1)).items;
    expect(attempt!.responseBody).toHaveLength(2048);
    expect(attempt!.responseBody).toBe('a'.repeat(2048));
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(8 * 1024 * 1024);
  });

  it('a connection reset is a retried network error', async () => {
    const r = await receiver((req, res) => res.socket?.destroy());
    const { deliveryId } = await published(r.url);
    expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'retry' });
    expect((await getDelivery(table, deliveryId))!.lastError).toMatch(/connection_reset|network_error/);
  });
});

describe('secrets in a grace window', () => {
  it('signs with both secrets, newest first, either verifies; an expired one is never used', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end());
    const newer = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
    const older = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;
    const grace = new Date(clock.getTime() + 3600_000).toISOString();
    const { deliveryId } = await published(r.url, {
      secrets: await sealedSecrets([{ secret: newer }, { secret: older, expiresAt: grace }], clock),
    });
    await dispatchDelivery(deps(), deliveryId);
    const req = r.seen[0]!;
    const headers = {
      'webhook-id': String(req.headers['webhook-id']),
      'webhook-timestamp': String(req.headers['webhook-timestamp']),
      'webhook-signature': String(req.headers['webhook-signature']),
    };
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Webhook(newer).verify(req.body, headers)).not.toThrow();
    expect(() => new Webhook(older).verify(req.body, headers)).not.toThrow();

    const r2 = await receiver((_req, res) => res.writeHead(200).end());
    const { deliveryId: later } = await published(r2.url, {
      secrets: await sealedSecrets([{ secret: newer }, { secret: older, expiresAt: new Date(clock.getTime() - 1).toISOString() }], clock),
    });
    await dispatchDelivery(deps(), later);
    const req2 = r2.seen[0]!;
    const h2 = {
      'webhook-id': String(req2.headers['webhook-id']),
      'webhook-timestamp': String(req2.headers['webhook-timestamp']),
      'webhook-signature': String(req2.headers['webhook-signature']),
    };
    expect(h2['webhook-signature'].split(' ')).toHaveLength(1);
    expect(() => new Webhook(older).verify(req2.body, h2)).toThrow();
  });
});

describe('the failure streak', () => {
  it('the 20th consecutive failure disables the endpoint atomically, with its audit and a notification', async () => {
    const r = await receiver((_req, res) => res.writeHead(500).end());
    const { endpoint, deliveryId, workspace } = await published(r.url, { consecutiveFailures: 19 });
    await dispatchDelivery(deps(), deliveryId);
    const ep = await getEndpointRecord(table, workspace, endpoint.endpointId);
    expect(ep).toMatchObject({ enabled: false, consecutiveFailures: 20 });
    const audit = await listAuditEvents(table, workspace, 5);
    expect(audit.items.filter((a) => a.action === 'webhook.disabled')).toEqual([
      expect.objectContaining({ actor: { kind: 'system', id: 'system' }, actorId: 'system', targetId: endpoint.endpointId }),
    ]);
    const notes = await listNotifications(table, workspace, 5);
    expect(notes.items[0]).toMatchObject({ kind: 'endpoint.disabled', endpointId: endpoint.endpointId });

    // Its queued retry becomes failed_permanent (endpoint_disabled) without an HTTP attempt.
    expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'ack', reason: 'endpoint_disabled' });
    expect(r.seen).toHaveLength(1);
    const summary = await getDelivery(table, deliveryId);
    expect(summary).toMatchObject({ status: 'failed_permanent', attempts: 1, lastResponseStatus: 500 });
    const attempts = (await listAttempts(table, deliveryId, 10)).items;
    expect(attempts[1]).toMatchObject({ ordinal: 2, outcome: 'failed_permanent', failureReason: 'endpoint_disabled', durationMs: null });
    expect((await getEndpointRecord(table, workspace, endpoint.endpointId))!.consecutiveFailures).toBe(20);
  });

  it('duplicate concurrent processing of one message records one observation, one streak step, one audit', async () => {
    const r = await receiver((_req, res) => setTimeout(() => res.writeHead(500).end(), 50));
    const { endpoint, deliveryId, workspace } = await published(r.url, { consecutiveFailures: 19 });
    const results = await Promise.all([
      dispatchDelivery(deps(), deliveryId),
      dispatchDelivery(deps(), deliveryId),
      dispatchDelivery(deps(), deliveryId),
    ]);
    // The losers record nothing, and still keep the message for its next attempt: a duplicate never deletes a retry.
    expect(results.map((x) => x.kind)).toEqual(['retry', 'retry', 'retry']);
    expect((await listAttempts(table, deliveryId, 10)).items).toHaveLength(1);
    expect(await getDelivery(table, deliveryId)).toMatchObject({ attempts: 1, status: 'failed' });
    expect(await getEndpointRecord(table, workspace, endpoint.endpointId)).toMatchObject({ consecutiveFailures: 20, enabled: false });
    const disabledAudits = (await listAuditEvents(table, workspace, 50)).items.filter((a) => a.action === 'webhook.disabled');
    expect(disabledAudits).toHaveLength(1);
  });

  it('a late duplicate of a delivered message changes nothing', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end());
    const { deliveryId } = await published(r.url);
    await dispatchDelivery(deps(), deliveryId);
    const before = await getDelivery(table, deliveryId);
    expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'ack', reason: 'already_terminal' });
    expect(await getDelivery(table, deliveryId)).toEqual(before);
    expect(r.seen).toHaveLength(1);
  });
});

describe('the service’s own faults (docs/behaviour.md#service-faults)', () => {
  const emfile = () =>
    createHttpSender(
      { deadlineMs: 1500, bodyReadMs: 300, bodyCapBytes: 2048 },
      { connector: () => (_opts, callback) => callback(Object.assign(new Error('connect EMFILE'), { code: 'EMFILE' }), null) },
    );

  it('a container out of file descriptors (EMFILE) retries the delivery and never counts in the endpoint’s streak', async () => {
    const r = await receiver((_req, res) => res.writeHead(204).end());
    // One more counted failure would disable the endpoint.
    const { endpoint, deliveryId, workspace } = await published(r.url, { consecutiveFailures: 19 });
    const logged: unknown[] = [];
    const log = { warn: (message: string, attributes: Record<string, unknown>) => void logged.push({ message, ...attributes }) };
    for (let receive = 1; receive <= 3; receive++) {
      expect(await dispatchDelivery(deps({ sender: emfile(), log }), deliveryId)).toMatchObject({
        kind: 'retry',
        delaySeconds: receive * 30,
      });
    }
    expect(r.seen).toHaveLength(0);
    expect(await getDelivery(table, deliveryId)).toMatchObject({
      status: 'failed',
      attempts: 3,
      lastError: 'service_error: EMFILE',
      nextAttemptAt: expect.any(String),
    });
    expect(await getEndpointRecord(table, workspace, endpoint.endpointId)).toMatchObject({ enabled: true, consecutiveFailures: 19 });
    expect(logged).toHaveLength(3);
    expect(logged[0]).toMatchObject({ deliveryId, reason: 'service_error: EMFILE' });

    // Once the container recovers, the retry is delivered and the streak resets.
    expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'ack', reason: 'delivered' });
    expect(r.seen).toHaveLength(1);
    expect(await getEndpointRecord(table, workspace, endpoint.endpointId)).toMatchObject({ enabled: true, consecutiveFailures: 0 });
    const evidence = (await listAttempts(table, deliveryId, 10)).items;
    expect(evidence.map((a) => [a.outcome, a.failureReason])).toEqual([
      ['failed', 'service_error: EMFILE'],
      ['failed', 'service_error: EMFILE'],
      ['failed', 'service_error: EMFILE'],
      ['delivered', null],
    ]);
  });

  /** A real c-ares resolver asking a loopback DNS server scripted by the test. */
  async function dnsAnswering(answer: DnsAnswer, deadlineMs = 300) {
    const server = await scriptedDnsServer(() => answer);
    stops.push(() => server.stop());
    return createDnsResolver({ servers: [server.server], deadlineMs, queryTimeoutMs: 1_000, tries: 3 });
  }

  it('a resolver that never answers fails the attempt as a timeout within its deadline: retried, streak unchanged', async () => {
    const { endpoint, deliveryId, workspace } = await published('https://hooks.example.test/x', { consecutiveFailures: 19 });
    const sent: unknown[] = [];
    const started = performance.now();
    const result = await dispatchDelivery(
      deps({
        resolve: await dnsAnswering('silent'),
        sender: async (x) => (sent.push(x), { kind: 'response', status: 200, body: null, durationMs: 1 }),
      }),
      deliveryId,
    );
    // Bounded by the resolver's deadline (300 ms here), not by c-ares' retries (several seconds).
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(result).toMatchObject({ kind: 'retry', delaySeconds: 30 });
    expect(sent).toHaveLength(0);
    expect(await getDelivery(table, deliveryId)).toMatchObject({ status: 'failed', lastError: 'service_error: dns_timeout' });
    const [attempt] = (await listAttempts(table, deliveryId, 1)).items;
    expect(attempt!.durationMs).toBeGreaterThanOrEqual(250);
    expect(await getEndpointRecord(table, workspace, endpoint.endpointId)).toMatchObject({ enabled: true, consecutiveFailures: 19 });
  });

  it('a resolver failing (SERVFAIL) is the service’s fault too', async () => {
    const { endpoint, deliveryId, workspace } = await published('https://hooks.example.test/x', { consecutiveFailures: 4 });
    expect(await dispatchDelivery(deps({ resolve: await dnsAnswering({ rcode: RCODE.SERVFAIL }) }), deliveryId)).toMatchObject({
      kind: 'retry',
    });
    expect(await getDelivery(table, deliveryId)).toMatchObject({ status: 'failed', lastError: 'service_error: dns_unavailable' });
    expect((await getEndpointRecord(table, workspace, endpoint.endpointId))!.consecutiveFailures).toBe(4);
  });

  it('a name that does not exist (NXDOMAIN) is the receiver’s fault: retried and counted', async () => {
    const { endpoint, deliveryId, workspace } = await published('https://gone.example.test/x', { consecutiveFailures: 4 });
    expect(await dispatchDelivery(deps({ resolve: await dnsAnswering({ rcode: RCODE.NXDOMAIN }) }), deliveryId)).toMatchObject({
      kind: 'retry',
    });
    expect(await getDelivery(table, deliveryId)).toMatchObject({ status: 'failed', lastError: 'dns_failure' });
    expect((await getEndpointRecord(table, workspace, endpoint.endpointId))!.consecutiveFailures).toBe(5);
  });

  it('resolution is part of the attempt’s deadline: the POST gets what is left', async () => {
    const r = await receiver(() => undefined); // never answers
    const { deliveryId } = await published(`http://localhost:${r.port}/slow`);
    const slowResolve = async () => {
      await new Promise((ok) => setTimeout(ok, 1_000));
      return [{ address: '127.0.0.1', family: 4 as const }];
    };
    expect(await dispatchDelivery(deps({ resolve: slowResolve }), deliveryId)).toMatchObject({ kind: 'retry' });
    const [attempt] = (await listAttempts(table, deliveryId, 1)).items;
    expect(attempt).toMatchObject({ failureReason: 'timeout' });
    // 1.5 s deadline, 1 s of it spent resolving: the POST had about 0.5 s, not another 1.5 s.
    expect(attempt!.durationMs).toBeLessThan(1_200);
  });
});

describe('a batch to one slow receiver', () => {
  it('sends all 25 records at once: none times out waiting for a connection', async () => {
    const { createHttpSender: make } = await import('../../lambdas/pipeline/http-sender');
    const r = await receiver((_req, res) => setTimeout(() => res.writeHead(200).end(), 600));
    const send = make({ deadlineMs: 1000, bodyReadMs: 300, bodyCapBytes: 2048 });
    const results = await Promise.all(
      Array.from({ length: 25 }, () =>
        send({
          url: new URL(r.url),
          headers: { 'content-type': 'application/json' },
          body: '{}',
          pinned: { address: '127.0.0.1', family: 4 },
        }),
      ),
    );
    expect(results.filter((x) => x.kind === 'response' && x.status === 200)).toHaveLength(25);
    expect(r.seen).toHaveLength(25);
  });
});

describe('lanes (docs/behaviour.md#delivery-lanes)', () => {
  it('the fast lane moves, without a request, the delivery of an endpoint with a streak, due when its next attempt is', async () => {
    const r = await receiver((_req, res) => res.writeHead(204).end());
    const { deliveryId } = await published(r.url, { consecutiveFailures: 1 });
    expect(await dispatchDelivery(deps(), deliveryId, 'fast')).toMatchObject({ kind: 'move', delaySeconds: 0 });
    expect(r.seen).toHaveLength(0);
    expect(await getDelivery(table, deliveryId)).toMatchObject({ status: 'pending', attempts: 0, evidenceCount: 0 });
    // The slow lane attempts it; with no slow lane (`only`) nothing ever moves.
    expect(await dispatchDelivery(deps(), deliveryId, 'slow')).toMatchObject({ kind: 'ack', reason: 'delivered' });
  });

  it('a failure in the fast lane sends its retry to the slow lane with the backoff; in the slow lane it is an ordinary retry', async () => {
    const r = await receiver((_req, res) => res.writeHead(503).end());
    const { deliveryId } = await published(r.url);
    expect(await dispatchDelivery(deps(), deliveryId, 'fast')).toMatchObject({ kind: 'move', delaySeconds: 30 });
    expect(await dispatchDelivery(deps(), deliveryId, 'slow')).toMatchObject({ kind: 'retry', delaySeconds: 60 });
    expect(r.seen).toHaveLength(2);
  });

  it('marks the endpoint slow while a slow POST is still running, then sends its retry to the slow lane', async () => {
    const answers: (() => void)[] = [];
    const r = await receiver((_req, res) => answers.push(() => res.writeHead(500).end()));
    const { endpoint, deliveryId } = await published(r.url);
    const slowSender = createHttpSender({ deadlineMs: 10_000, bodyReadMs: 300, bodyCapBytes: 2048 });
    const running = dispatchDelivery(deps({ sender: slowSender, now: () => new Date() }), deliveryId, 'fast');
    // Before the receiver answers, the mark is there: the endpoint's next deliveries go to the slow lane.
    await vi.waitFor(
      async () => expect((await getEndpointRecord(table, endpoint.workspace, endpoint.endpointId))?.slowUntil).toBeTruthy(),
      { timeout: 6_000, interval: 100 },
    );
    expect(answers).toHaveLength(1);
    answers[0]!();
    expect(await running).toMatchObject({ kind: 'move', delaySeconds: 30 });
  }, 15_000);
});
