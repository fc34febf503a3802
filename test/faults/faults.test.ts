/**
 * The fault-injection suite (docs/behaviour.md#event-publishing, docs/behaviour.md#attempt-evidence): the real publisher, dispatcher,
 * dead-letter consumer and repair on DynamoDB Local and real loopback receivers, with a
 * fault injected in each scenario. Every scenario asserts that no delivery is lost, none
 * is duplicated under a new id, no summary regressed and the attempt evidence is
 * complete (harness.ts: checkOutcome). The last scenario runs the real local stack.
 * A summary table (scenarios, deliveries, lost, duplicated) is printed at the end.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { getDelivery, listAttempts } from '../../lambdas/store/deliveries';
import type { EndpointRecord } from '../../lambdas/store/endpoints';
import { usePipelineApi } from '../helpers/local-api';
import { scriptedReceiver, type SeenRequest } from '../helpers/scripted-receiver';
import {
  checkOutcome,
  FAULT_SEND_LIMITS,
  notificationsAbout,
  startHarness,
  summaryTable,
  type Expected,
  type Harness,
  type SummaryRow,
} from './harness';

const summary: SummaryRow[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});
afterAll(() => {
  // One table for the whole run, short: what a reader of the CI log wants to see at a glance.
  if (summary.length > 0) process.stdout.write(`\n${summaryTable(summary)}\n\n`);
});

type Respond = (req: SeenRequest, res: ServerResponse, n: number) => void;

async function receiver(respond: Respond) {
  const r = await scriptedReceiver(respond);
  cleanups.push(() => r.stop());
  return r;
}

async function harness(): Promise<Harness> {
  const h = await startHarness();
  cleanups.push(() => h.close());
  return h;
}

const ok: Respond = (_req, res) => res.writeHead(200).end('ok');
const unavailable: Respond = (_req, res) => res.writeHead(503).end('down');

/** Endpoints on their own receivers, each expected to end `end`. */
async function endpoints(h: Harness, specs: { respond: Respond; end?: Expected['end'] }[]) {
  const out: { endpoint: EndpointRecord; receiver: Awaited<ReturnType<typeof receiver>>; end: Expected['end'] }[] = [];
  for (const s of specs) {
    const r = await receiver(s.respond);
    out.push({ endpoint: await h.endpoint(r.url), receiver: r, end: s.end ?? 'delivered' });
  }
  return out;
}

/** Every (event, endpoint) pair. */
function expectations(events: string[], eps: Awaited<ReturnType<typeof endpoints>>): Expected[] {
  return events.flatMap((eventId) => eps.map((e) => ({ eventId, endpoint: e.endpoint, receiver: e.receiver, end: e.end })));
}

/** Checks the scenario, adds its row to the summary, and fails on any problem. */
async function verify(scenario: string, h: Harness, expected: Expected[], extraFaults = 0) {
  const outcome = await checkOutcome(h, expected);
  summary.push({ scenario, faults: h.faultCount() + extraFaults, ...outcome });
  expect(outcome.problems, `${scenario}\n${h.crashes.join('\n')}`).toEqual([]);
  expect(outcome).toMatchObject({ lost: 0, duplicated: 0 });
  return outcome;
}

/** The attempts of the one delivery of `eventId` to `endpoint`. */
async function attemptsOf(h: Harness, endpoint: EndpointRecord, eventId: string, time: string) {
  const { eventDeliveryId } = await import('../../lambdas/domain/ids');
  const id = eventDeliveryId(eventId, endpoint.endpointId, new Date(time));
  return { id, attempts: (await listAttempts(h.reader, id, 50)).items, row: await getDelivery(h.reader, id) };
}

describe('publisher crashes (EventBridge invokes it again with the same event)', () => {
  it('crash between the rows and the enqueue', async () => {
    const h = await harness();
    const eps = await endpoints(h, [{ respond: ok }, { respond: ok }, { respond: ok }]);
    const first = await h.publish(h.event('e1'), { crash: 'before-enqueue' });
    expect(first.invocations).toBe(2);
    await h.publish(h.event('e2'));
    await h.settle();
    const out = await verify('crash between rows and enqueue', h, expectations(['e1', 'e2'], eps));
    expect(out.repeatedPosts).toBe(0);
  });

  it('crash halfway through writing the rows (before a write, and after one applied)', async () => {
    const h = await harness();
    const eps = await endpoints(h, [{ respond: ok }, { respond: ok }, { respond: ok }, { respond: ok }]);
    let puts = 0;
    h.faults.fail({ command: 'PutItemCommand', when: () => ++puts === 3, times: 1, kind: '5xx', phase: 'before' });
    expect((await h.publish(h.event('e1'))).invocations).toBe(2);
    // The write applied, its response lost: the retry must find the row, not write a second one.
    h.faults.fail({ command: 'PutItemCommand', times: 1, kind: '5xx', phase: 'after' });
    expect((await h.publish(h.event('e2'))).invocations).toBe(2);
    await h.settle();
    await verify('crash while writing rows', h, expectations(['e1', 'e2'], eps));
  });
});

describe('dispatcher crashes (SQS hands the message over again after its visibility timeout)', () => {
  it('crash after the POST before the record', async () => {
    const h = await harness();
    // Each receiver fails its fourth POST (e3's first attempt): a streak change, whose attempt is stored before its transaction.
    const failsFourth: Respond = (_req, res, n) => res.writeHead(n === 4 ? 503 : 200).end();
    const eps = await endpoints(h, [{ respond: failsFourth }, { respond: failsFourth }]);
    const writesState = (input: Record<string, unknown>) => /"sk":(\{"S":)?"STATE"/.test(JSON.stringify(input));
    await h.publish(h.event('e1'));
    // The first attempt travels in the state's first write, which never reaches the table: the POST happened, nothing says so.
    h.faults.fail({ command: 'UpdateItemCommand', when: writesState, times: 2, kind: '5xx', phase: 'before' });
    await h.settle();
    await h.publish(h.event('e2'));
    // The state applied but the answer was lost: the next receive must find it terminal and not POST again.
    h.faults.fail({ command: 'UpdateItemCommand', when: writesState, times: 2, kind: '5xx', phase: 'after' });
    await h.settle();
    await h.publish(h.event('e3'));
    // The failed attempt is stored and its state (with the streak) never written: the next receive completes it from the attempt, no POST.
    h.faults.fail({ command: 'TransactWriteItemsCommand', when: writesState, times: 2, kind: '5xx', phase: 'before' });
    await h.settle();
    expect(h.faults.injected.get('TransactWriteItemsCommand')).toBe(2);
    const out = await verify('crash after POST, before record', h, expectations(['e1', 'e2', 'e3'], eps));
    // Each e1 delivery was POSTed twice under its one id (at-least-once); each e2 delivery once; each e3 delivery twice (its 503, then its retry), never a third time.
    expect(out.repeatedPosts).toBe(4);
    for (const e of eps) expect(e.receiver.seen).toHaveLength(5);
  });

  it('the same message received twice concurrently', async () => {
    const h = await harness();
    // Slow enough that both receives are in flight together.
    const slowOk: Respond = (_req, res) => void setTimeout(() => res.writeHead(200).end('ok'), 60);
    const flaky: Respond = (_req, res, n) => void setTimeout(() => res.writeHead(n <= 2 ? 503 : 200).end(), 60);
    const eps = await endpoints(h, [{ respond: slowOk }, { respond: flaky }]);
    const e1 = h.event('e1');
    const { result } = await h.publish(e1);
    for (const id of result.deliveryIds) h.duplicateMessage(id);
    await h.settle();
    await verify('same message twice, concurrently', h, expectations(['e1'], eps), result.deliveryIds.length);
    // Two concurrent POSTs, one observation: the evidence holds exactly one attempt for the 2xx endpoint.
    const { attempts } = await attemptsOf(h, eps[0]!.endpoint, 'e1', e1.time!);
    expect(attempts.map((a) => a.outcome)).toEqual(['delivered']);
  });
});

describe('DynamoDB faults on every kind of call (an SDK middleware fails the first calls of each command)', () => {
  for (const [label, arm] of [
    ['DynamoDB throttling, every call kind', (h: Harness) => h.faults.failFirstOfEachKind(2, 'throttle', 'before')],
    [
      'DynamoDB 5xx, every call kind',
      (h: Harness) => {
        // The first call of each kind is applied and its answer lost; the second never arrives.
        h.faults.failFirstOfEachKind(1, '5xx', 'after');
        h.faults.failFirstOfEachKind(1, '5xx', 'before');
      },
    ],
  ] as const) {
    it(label, async () => {
      const h = await harness();
      const eps = await endpoints(h, [{ respond: ok }, { respond: ok }, { respond: unavailable, end: 'dead_lettered' }]);
      arm(h);
      // Two events: the always-503 endpoint fails 2 × 7 times, under the 20 that would disable it.
      for (const e of ['e1', 'e2']) await h.publish(h.event(e));
      await h.settle();
      const kinds = [...h.faults.injected.keys()];
      for (const kind of ['GetItemCommand', 'QueryCommand', 'PutItemCommand', 'UpdateItemCommand', 'TransactWriteItemsCommand'])
        expect(kinds).toContain(kind);
      await verify(label, h, expectations(['e1', 'e2'], eps));
    });
  }
});

describe('SQS and the dead-letter consumer', () => {
  it('SQS send failure (publisher and repair): the stuck-pending repair sends the rows', async () => {
    const h = await harness();
    const eps = await endpoints(h, [{ respond: ok }, { respond: ok }]);
    h.failSends(1);
    const { result } = await h.publish(h.event('e1'));
    expect(result.queued).toBe(false);
    await h.publish(h.event('e2'));
    await h.settle();
    // The repair's own send fails once too: its next pass is the retry.
    h.failSends(1);
    await expect(h.repair()).rejects.toThrow(/SQS/);
    expect(await h.repair()).toBe(2);
    await h.settle();
    await verify('SQS send failure', h, expectations(['e1', 'e2'], eps));
  });

  it('a redelivered EventBridge event (after delivery, and while still pending)', async () => {
    const h = await harness();
    const eps = await endpoints(h, [{ respond: ok }, { respond: ok }, { respond: unavailable, end: 'dead_lettered' }]);
    const e1 = h.event('e1');
    const first = await h.publish(e1);
    await h.settle();
    h.advance(3600_000);
    const again = await h.publish(e1);
    expect(again.result.deliveryIds).toEqual(first.result.deliveryIds);
    const e2 = h.event('e2');
    await h.publish(e2);
    await h.publish(e2);
    await h.settle();
    await verify('redelivered EventBridge event', h, expectations(['e1', 'e2'], eps), 2);
    // Redelivered after its deliveries were made, e1 reached each receiver exactly once.
    for (const e of eps.slice(0, 2)) expect(e.receiver.seen.filter((s) => s.body.includes('"e1"'))).toHaveLength(1);
  });

  it('the dead-letter consumer failing once', async () => {
    const h = await harness();
    const eps = await endpoints(h, [{ respond: unavailable, end: 'dead_lettered' }]);
    h.faults.fail({
      command: 'TransactWriteItemsCommand',
      when: (input) => JSON.stringify(input).includes('dead_lettered'),
      times: 1,
      kind: '5xx',
      phase: 'before',
    });
    const e1 = h.event('e1');
    await h.publish(e1);
    await h.settle();
    await verify('dead-letter consumer fails once', h, expectations(['e1'], eps));
    const { id, attempts } = await attemptsOf(h, eps[0]!.endpoint, 'e1', e1.time!);
    expect(attempts.map((a) => a.outcome)).toEqual([...Array<string>(7).fill('failed'), 'dead_lettered']);
    expect(await notificationsAbout(h, eps[0]!.endpoint.workspace, id)).toBe(1);
  });

  // The marking commits but the invocation fails before the notification (a lost answer, a
  // crash): the retry finds the delivery already dead_lettered and records the notification once.
  it('the dead-letter consumer failing after its marking still records the notification', async () => {
    const h = await harness();
    const eps = await endpoints(h, [{ respond: unavailable, end: 'dead_lettered' }]);
    h.faults.fail({
      command: 'TransactWriteItemsCommand',
      when: (input) => JSON.stringify(input).includes('dead_lettered'),
      times: 1,
      kind: '5xx',
      phase: 'after',
    });
    const e1 = h.event('e1');
    await h.publish(e1);
    await h.settle();
    const outcome = await checkOutcome(h, expectations(['e1'], eps));
    expect(outcome.problems).toEqual([]);
    const { id } = await attemptsOf(h, eps[0]!.endpoint, 'e1', e1.time!);
    expect(await notificationsAbout(h, eps[0]!.endpoint.workspace, id)).toBe(1);
  });
});

/** Destroys a socket with a TCP RST (a reset, not a polite close). */
const reset = (socket: Socket | null) => socket?.resetAndDestroy();

describe('receivers that misbehave (first request misbehaves, the next one answers 200)', () => {
  const TEN_MB = 10 * 1024 * 1024;
  const scenarios: {
    name: string;
    first: Respond;
    reason: RegExp | null;
    firstStatus: number | null;
    firstBody: 'absent' | 'prefix' | null;
    final: Respond;
    finalBody: 'absent' | 'prefix' | 'ok';
  }[] = [
    // Never answers: the sender's deadline ends the attempt.
    {
      name: 'receiver timeout',
      first: () => undefined,
      reason: /^timeout$/,
      firstStatus: null,
      firstBody: null,
      final: ok,
      finalBody: 'ok',
    },
    {
      name: 'slow body',
      first: (_req, res) => {
        res.writeHead(503, { 'content-type': 'text/plain' });
        const drip = setInterval(() => res.write('.'), 50);
        res.on('close', () => clearInterval(drip));
      },
      reason: /^http_503$/,
      firstStatus: 503,
      firstBody: 'absent',
      final: (_req, res) => {
        res.writeHead(200);
        const drip = setInterval(() => res.write('.'), 50);
        res.on('close', () => clearInterval(drip));
      },
      finalBody: 'absent',
    },
    {
      name: '10 MB body',
      first: (_req, res) => res.writeHead(503, { 'content-length': String(TEN_MB) }).end(Buffer.alloc(TEN_MB, 'x')),
      reason: /^http_503$/,
      firstStatus: 503,
      firstBody: 'prefix',
      final: (_req, res) => res.writeHead(200, { 'content-length': String(TEN_MB) }).end(Buffer.alloc(TEN_MB, 'y')),
      finalBody: 'prefix',
    },
    {
      name: 'connection reset mid-response',
      first: (_req, res) => {
        res.socket?.write('HTTP/1.1 200 OK\r\ncontent-le');
        reset(res.socket);
      },
      reason: /^(connection_reset|network_error)/,
      firstStatus: null,
      firstBody: null,
      // A 2xx whose body is cut off is still delivered; the body is stored as absent.
      final: (_req, res) => {
        res.writeHead(200, { 'content-length': '1000' });
        res.write('partial', () => reset(res.socket));
      },
      finalBody: 'absent',
    },
    {
      name: 'receiver closes without answering',
      first: (_req, res) => res.socket?.destroy(),
      reason: /^(connection_reset|network_error)/,
      firstStatus: null,
      firstBody: null,
      final: ok,
      finalBody: 'ok',
    },
  ];

  for (const s of scenarios) {
    it(s.name, async () => {
      const h = await harness();
      const eps = await endpoints(h, [{ respond: (req, res, n) => (n === 1 ? s.first : s.final)(req, res, n) }]);
      const e1 = h.event('e1');
      await h.publish(e1);
      await h.settle();
      await verify(s.name, h, expectations(['e1'], eps), 1);
      const { attempts } = await attemptsOf(h, eps[0]!.endpoint, 'e1', e1.time!);
      expect(attempts.map((a) => a.outcome)).toEqual(['failed', 'delivered']);
      const [first, final] = attempts as [(typeof attempts)[0], (typeof attempts)[0]];
      expect(first.failureReason).toMatch(s.reason!);
      expect(first.responseStatus).toBe(s.firstStatus);
      const body = (b: string | null) => (b === null ? 'absent' : b.length === FAULT_SEND_LIMITS.bodyCapBytes ? 'prefix' : b);
      if (s.firstBody) expect(body(first.responseBody)).toBe(s.firstBody);
      expect(body(final.responseBody)).toBe(s.finalBody);
      // Each attempt stayed within the deadline (plus scheduling slack), whatever the receiver did.
      for (const a of attempts) expect(a.durationMs!).toBeLessThan(FAULT_SEND_LIMITS.deadlineMs + FAULT_SEND_LIMITS.bodyReadMs + 1000);
    });
  }
});

describe('the local stack (real handlers, in-process queues)', () => {
  const pipeline = usePipelineApi();

  it('POST /local/events refusals are problem+json that no cache keeps', async () => {
    const { api } = pipeline;
    for (const [init, status] of [
      [{ method: 'POST', body: '{not json' }, 400],
      [{ method: 'GET' }, 404],
      [
        { method: 'POST', body: JSON.stringify({ id: '', workspace: api.workspace, type: 'order.shipped', payload: { orderId: 'x' } }) },
        400,
      ],
    ] as const) {
      const res = await fetch(`${api.apiUrl}/local/events`, init);
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.headers.get('cache-control')).toBe('no-store');
      await res.body?.cancel();
    }
  });

  it('a redelivered event on POST /local/events (the same id) creates nothing new', async () => {
    const { api } = pipeline;
    const r = await pipeline.receiver((_req, res) => res.writeHead(204).end());
    const created = await api.call('POST', `/workspaces/${api.workspace}/webhooks`, {
      body: { url: r.url, eventTypes: ['order.shipped'] },
    });
    expect(created.status).toBe(201);
    const post = (body: unknown) =>
      fetch(`${api.apiUrl}/local/events`, { method: 'POST', body: JSON.stringify(body) }).then(async (res) => ({
        status: res.status,
        body: (await res.json()) as { deliveryIds: string[] },
      }));
    const event = { id: 'local-evt-1', workspace: api.workspace, type: 'order.shipped', payload: { orderId: 'local-1' } };
    const first = await post(event);
    expect(first.status).toBe(202);
    const id = first.body.deliveryIds[0]!;
    const delivered = async () =>
      (await api.call('GET', `/workspaces/${api.workspace}/webhooks/deliveries/${id}`)).body?.status === 'delivered';
    for (let i = 0; i < 200 && !(await delivered()); i++) await new Promise((ok) => setTimeout(ok, 25));
    expect(await delivered()).toBe(true);
    // EventBridge delivers the same event again: same ids, nothing new at the receiver.
    const again = await post(event);
    expect(again).toEqual(first);
    // Another event is another delivery; a malformed id is refused.
    const other = await post({ ...event, id: 'local-evt-2', payload: { orderId: 'local-2' } });
    expect(other.body.deliveryIds[0]).not.toBe(id);
    expect((await post({ ...event, id: 42 })).status).toBe(400);
    const list = await api.call('GET', `/workspaces/${api.workspace}/webhooks/${created.body.endpointId}/deliveries`);
    for (let i = 0; i < 200 && r.seen.length < 2; i++) await new Promise((ok) => setTimeout(ok, 25));
    expect(list.body.items.filter((d: { payload: { orderId: string } }) => d.payload.orderId === 'local-1')).toHaveLength(1);
    expect(r.seen.filter((s) => s.headers['webhook-id'] === id)).toHaveLength(1);
    summary.push({
      scenario: 'redelivered event, local stack',
      deliveries: 1,
      lost: 0,
      duplicated: r.seen.filter((s) => s.body.includes('local-1') && s.headers['webhook-id'] !== id).length,
      repeatedPosts: 0,
      problems: [],
      faults: 1,
    });
  });
});
