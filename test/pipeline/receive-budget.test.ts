/**
 * Only attempts spend a delivery's retries (docs/behaviour.md#delivery-lanes,
 * docs/behaviour.md#dead-lettering), end to end in the real local stack, whose in-process queues
 * count receives and redrive to the dead-letter queue after 7: a delivery whose message comes back
 * more often than it is attempted (moves and deferrals whose re-send fails, a dispatcher that dies
 * before recording anything) still gets every attempt; a dead letter that still has retries is
 * sent back, not marked; a message that always kills its dispatcher ends `dead_lettered` after a
 * bounded number of requeues.
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AdapterFactories } from '../../lambdas/composition/runtime';
import { SLOW_LANE } from '../../lambdas/domain/delivery-lanes';
import { MAX_RECEIVES } from '../../lambdas/contract/deployment';
import { MAX_REQUEUES, QUEUE_RECEIVES_EXHAUSTED, RETRIES_EXHAUSTED } from '../../lambdas/domain/delivery-lifecycle';
import { newId } from '../../lambdas/domain/ids';
import { parseDeliveryMessage, type DeliveryMessage } from '../../lambdas/queue/delivery-queue';
import type { BatchConsumer } from '../../bin/local/in-process-queue';
import { usePipelineApi, type TestApi } from '../helpers/local-api';
import { seedEndpoint } from '../helpers/pipeline';

/** What the test does to the pipeline (reset after each test). */
const faults = {
  /** Sends to the slow lane fail while this says so (given the messages of the send). */
  failSlowSend: (_messages: readonly DeliveryMessage[]): boolean => false,
  /** Fast-lane records that "kill" the dispatcher before it records anything (given the message and its receive count). */
  crash: (_message: DeliveryMessage, _receive: number): boolean => false,
  /** Deliveries of the slow lane put over the per-endpoint cap on their receive (see {@link crowd}), while this says so. */
  crowd: (_deliveryId: string): boolean => false,
};

/** One record as a dispatcher or the dead-letter consumer got it. */
interface Receive {
  readonly fn: string;
  readonly deliveryId: string;
  readonly receiveCount: number;
  readonly requeues: number;
}
const receives: Receive[] = [];
const receivesOf = (deliveryId: string, fn?: string) => receives.filter((r) => r.deliveryId === deliveryId && (!fn || r.fn === fn));

const pipeline = usePipelineApi({
  instrument: {
    adapters: (own: AdapterFactories): AdapterFactories => ({
      ...own,
      deliveryQueue: (url) => {
        const queue = own.deliveryQueue(url);
        return {
          async send(messages) {
            if (url.endsWith('-slow') && faults.failSlowSend(messages)) throw new Error('injected SQS failure');
            await queue.send(messages);
          },
        };
      },
    }),
    consumer: (name, consume) => instrumented(name, consume),
  },
});
let api: TestApi;
const ws = () => `/workspaces/${api.workspace}`;

beforeAll(() => {
  api = pipeline.api;
});
/** Endpoints of the test, deleted after it: each test publishes to its own. */
const endpoints: string[] = [];

afterEach(async () => {
  for (const id of endpoints.splice(0)) expect((await api.call('DELETE', `${ws()}/webhooks/${id}`)).status).toBe(204);
  faults.failSlowSend = () => false;
  faults.crash = () => false;
  faults.crowd = () => false;
});

/** The consumer of `name`, recording every receive and applying {@link faults}. */
function instrumented(name: string, consume: BatchConsumer): BatchConsumer {
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const parsed = event.Records.map((r) => ({ record: r, message: parseDeliveryMessage(r.body) }));
    for (const { record, message } of parsed) {
      if (message)
        receives.push({
          fn: name,
          deliveryId: message.deliveryId,
          receiveCount: Number(record.attributes.ApproximateReceiveCount),
          requeues: message.requeues ?? 0,
        });
    }
    if (name === 'dispatcher') {
      // A dispatcher that dies before recording anything: the record is not processed and comes back
      // (at once here, not after the visibility timeout, to keep the test short).
      const crashed = parsed.filter(
        ({ record, message }) => message && faults.crash(message, Number(record.attributes.ApproximateReceiveCount)),
      );
      for (const { record } of crashed) await pipeline.api.queues.deliveries.delay(record.receiptHandle, 0);
      const rest = parsed.filter((p) => !crashed.includes(p)).map((p) => p.record);
      const response = rest.length > 0 ? await consume({ Records: rest }) : { batchItemFailures: [] };
      return { batchItemFailures: [...response.batchItemFailures, ...crashed.map(({ record }) => ({ itemIdentifier: record.messageId }))] };
    }
    if (name === 'slow-dispatcher') {
      // Two messages of the same endpoint ahead of a crowded delivery in its batch (of deliveries that
      // are gone: acknowledged without an attempt) put it over the per-endpoint cap: it is deferred.
      const records = parsed.flatMap(({ record, message }) =>
        message?.endpointId && faults.crowd(message.deliveryId) ? [...crowd(record, message), record] : [record],
      );
      return consume({ Records: records });
    }
    return consume(event);
  };
}

/** {@link SLOW_LANE.perEndpointPerBatch} records of deliveries that do not exist, to the same endpoint as `message`. */
function crowd(record: SQSRecord, message: DeliveryMessage): SQSRecord[] {
  return Array.from({ length: SLOW_LANE.perEndpointPerBatch }, (_, i) => ({
    ...record,
    messageId: `crowd-${i}-${record.messageId}`,
    receiptHandle: `crowd-${i}-${record.receiptHandle}`,
    body: JSON.stringify({ deliveryId: newId('whd', new Date()), endpointId: message.endpointId, workspace: message.workspace }),
  }));
}

async function endpointTo(url: string): Promise<string> {
  const created = await api.call('POST', `${ws()}/webhooks`, { body: { url, eventTypes: ['order.shipped'] } });
  expect(created.status).toBe(201);
  endpoints.push(created.body.endpointId as string);
  return created.body.endpointId as string;
}

async function publish(orderId: string): Promise<string> {
  const res = await fetch(`${api.apiUrl}/local/events`, {
    method: 'POST',
    body: JSON.stringify({ workspace: api.workspace, type: 'order.shipped', payload: { orderId } }),
  });
  expect(res.status).toBe(202);
  const { deliveryIds } = (await res.json()) as { deliveryIds: string[] };
  expect(deliveryIds).toHaveLength(1);
  return deliveryIds[0]!;
}

async function delivery(id: string) {
  const res = await api.call('GET', `${ws()}/webhooks/deliveries/${id}`);
  expect(res.status).toBe(200);
  return res.body as { status: string; attempts: number; nextAttemptAt: string | null };
}

async function attempts(id: string) {
  const res = await api.call('GET', `${ws()}/webhooks/deliveries/${id}/attempts`);
  expect(res.status).toBe(200);
  return (res.body.items as { outcome: string; failureReason: string | null }[]).map(
    (a) => `${a.outcome}${a.failureReason ? ` ${a.failureReason}` : ''}`,
  );
}

describe('only attempts spend a delivery’s retries', () => {
  it('a move to the slow lane whose send keeps failing comes back more than 7 times, and the delivery still arrives: no receive was spent', async () => {
    const receiver = await pipeline.receiver((_req, res) => res.writeHead(204).end());
    // A failure streak puts the endpoint in the slow lane; a test send enters the fast lane, so it must move.
    const endpoint = await seedEndpoint(api.table, { workspace: api.workspace, url: receiver.url, consecutiveFailures: 1 });
    endpoints.push(endpoint.endpointId);
    let fastReceives = 0;
    faults.failSlowSend = () => true;
    const sent = await api.call('POST', `${ws()}/webhooks/${endpoint.endpointId}/test-event`);
    expect(sent.status).toBe(202);
    const id = sent.body.deliveryId as string;
    await vi.waitFor(() => expect((fastReceives = receivesOf(id, 'dispatcher').length)).toBeGreaterThan(MAX_RECEIVES + 3), {
      timeout: 20_000,
      interval: 20,
    });
    faults.failSlowSend = () => false;
    await vi.waitFor(async () => expect(await delivery(id)).toMatchObject({ status: 'delivered', attempts: 1 }), {
      timeout: 20_000,
      interval: 50,
    });
    expect(fastReceives).toBeGreaterThan(MAX_RECEIVES);
    expect(await attempts(id)).toEqual(['delivered']);
    expect(receiver.seen).toHaveLength(1);
    // Re-sent as new messages on their last receive: none reached the dead-letter queue.
    expect(receivesOf(id, 'dead-letter')).toEqual([]);
  }, 60_000);

  it('a slow-lane delivery deferred more than 7 times while its re-sends fail still gets its 7 attempts, then is dead-lettered for them', async () => {
    const failing = await pipeline.receiver((_req, res) => res.writeHead(503).end());
    await endpointTo(failing.url);
    let deferrals = 0;
    const forced = MAX_RECEIVES + 2;
    // Its first attempt fails in the fast lane; from then on it is crowded in the slow lane, and its deferrals are not re-sent.
    faults.crowd = () => deferrals < forced;
    faults.failSlowSend = (messages) =>
      deferrals < forced && messages.every((m) => m.delaySeconds === SLOW_LANE.deferSeconds) && ((deferrals += messages.length), true);
    const id = await publish('deferred');
    await vi.waitFor(async () => expect(await delivery(id)).toMatchObject({ status: 'dead_lettered', attempts: 7 }), {
      timeout: 30_000,
      interval: 100,
    });
    expect(deferrals).toBeGreaterThanOrEqual(forced);
    expect(failing.seen).toHaveLength(7);
    expect(await attempts(id)).toEqual([...Array<string>(7).fill('failed http_503'), `dead_lettered ${RETRIES_EXHAUSTED}`]);
  }, 60_000);

  it('a dead letter with retries left is sent back, not marked: a dispatcher that died on every receive of its message, then recovered, delivers it with one attempt', async () => {
    const receiver = await pipeline.receiver((_req, res) => res.writeHead(204).end());
    const endpointId = await endpointTo(receiver.url);
    faults.crash = (m, receive) =>
      m.endpointId === endpointId && receivesOf(m.deliveryId, 'dead-letter').length === 0 && receive <= MAX_RECEIVES;
    const id = await publish('crashed-once');
    await vi.waitFor(async () => expect(await delivery(id)).toMatchObject({ status: 'delivered', attempts: 1 }), {
      timeout: 20_000,
      interval: 50,
    });
    expect(await attempts(id)).toEqual(['delivered']);
    // Seven receives on its first message, the dead-letter queue, then back as a new message counting one requeue.
    expect(receivesOf(id, 'dispatcher').map((r) => [r.receiveCount, r.requeues])).toEqual([
      ...Array.from({ length: MAX_RECEIVES }, (_, i) => [i + 1, 0]),
      [1, 1],
    ]);
    expect(receivesOf(id, 'dead-letter').map((r) => r.requeues)).toEqual([0]);
    expect(receiver.seen).toHaveLength(1);
    expect((await api.call('GET', `${ws()}/webhooks/${endpointId}/deliveries`)).body.items).toHaveLength(1);
  }, 60_000);

  it('a message that always kills its dispatcher ends dead-lettered after a bounded number of requeues, never attempted', async () => {
    const receiver = await pipeline.receiver((_req, res) => res.writeHead(204).end());
    const endpointId = await endpointTo(receiver.url);
    faults.crash = (m) => m.endpointId === endpointId;
    const poison = await publish('poison');
    await vi.waitFor(async () => expect((await delivery(poison)).status).toBe('dead_lettered'), { timeout: 30_000, interval: 100 });
    expect(await delivery(poison)).toMatchObject({ attempts: 0, nextAttemptAt: null });
    expect(await attempts(poison)).toEqual([`dead_lettered ${QUEUE_RECEIVES_EXHAUSTED}`]);
    // Seven receives per message, the first one and each requeue's: bounded.
    const dispatched = receivesOf(poison, 'dispatcher');
    expect(dispatched).toHaveLength(MAX_RECEIVES * (MAX_REQUEUES + 1));
    expect(receivesOf(poison, 'dead-letter').map((r) => r.requeues)).toEqual(Array.from({ length: MAX_REQUEUES + 1 }, (_, i) => i));
    expect(receiver.seen).toHaveLength(0);
    // The workspace is told it was never attempted, and why.
    const notes = await api.call('GET', `${ws()}/notifications`);
    const note = (notes.body.items as { deliveryId: string | null; message: string }[]).find((n) => n.deliveryId === poison);
    expect(note?.message).toContain(`stopped before any attempt (${QUEUE_RECEIVES_EXHAUSTED})`);
  }, 60_000);
});
