/**
 * The outbox relay under faults (docs/architecture.md#outbox), on the local stack: the service's
 * own events reach a real subscriber on loopback (signed deliveries verified with
 * `standardwebhooks`) exactly once per id, when the function dies after its change committed, when
 * the relay's puts fail three times, when every put fails (the records then land in the on-failure
 * queue), and when the relay puts the same stream records twice.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AdapterFactories } from '#lambdas/composition/runtime';
import { defaultRuntime } from '#lambdas/composition/runtime';
import { OUTBOX } from '#lambdas/contract/deployment';
import { loadHandler } from '../../bin/local/lambda-loader';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { scriptedReceiver } from '../helpers/scripted-receiver';
import { withOutbox } from '../helpers/outbox';
import { injectDynamoFaults } from './dynamo-faults';

/**
 * How the test breaks the bus the relay puts on, for the puts that carry an event `about` an id:
 * `fail` of them fail before anything is put (`Infinity`: every one), `lose` of them are put and
 * then their answer is lost (the relay retries: a duplicate). `puts` counts those puts.
 */
const bus = { about: '', fail: 0, lose: 0, puts: 0 };
const carries = (events: readonly { payloadJson: string }[]) => bus.about !== '' && events.some((e) => e.payloadJson.includes(bus.about));

let api: TestApi;
const stops: (() => Promise<void>)[] = [];
beforeAll(async () => {
  api = await startTestApi({
    timeScale: 50,
    schedules: false,
    // The faults below make the relay fail on purpose; the assertions read their outcome.
    onPipelineError: () => undefined,
    instrument: {
      adapters: (own): AdapterFactories => ({
        ...own,
        domainEvents: (name) => {
          const inner = own.domainEvents(name);
          return {
            put: async (events) => {
              if (!carries(events)) return inner.put(events);
              bus.puts++;
              if (bus.fail > 0) {
                bus.fail--;
                throw new Error('EventBridge unavailable');
              }
              const results = await inner.put(events);
              if (bus.lose > 0) {
                bus.lose--;
                // Put, but the answer is lost: the relay fails and its records are relayed again.
                throw new Error('socket hang up after PutEvents');
              }
              return results;
            },
          };
        },
      }),
    },
  });
}, 120_000);
afterAll(async () => {
  await Promise.all(stops.map((s) => s()));
  await api?.close();
});

const EVENTUALLY = { timeout: 20_000, interval: 50 };
const ws = () => `/workspaces/${api.workspace}`;

/** What the subscriber verified: per delivery (webhook-id), the event type and payload, and how many POSTs carried it. */
interface Seen {
  readonly type: string;
  readonly payload: { endpointId?: string; tokenId?: string };
  posts: number;
}

/** A receiver subscribed to the service's own events, verifying every delivery's signature. */
async function subscriber(eventTypes: string[]) {
  const seen = new Map<string, Seen>();
  const verifyFailures: string[] = [];
  let secret = '';
  const r = await scriptedReceiver((req, res) => {
    try {
      const body = new Webhook(secret).verify(req.body, {
        'webhook-id': String(req.headers['webhook-id']),
        'webhook-timestamp': String(req.headers['webhook-timestamp']),
        'webhook-signature': String(req.headers['webhook-signature']),
      }) as { deliveryId: string; eventType: string; payload: Seen['payload'] };
      const known = seen.get(body.deliveryId);
      if (known) known.posts++;
      else seen.set(body.deliveryId, { type: body.eventType, payload: body.payload, posts: 1 });
      res.writeHead(200).end('ok');
    } catch (error) {
      verifyFailures.push((error as Error).message);
      res.writeHead(400).end();
    }
  });
  stops.push(() => r.stop());
  const created = await api.call('POST', `${ws()}/webhooks`, { body: { url: r.url, eventTypes } });
  expect(created.status, created.text).toBe(201);
  const rotated = await api.call('POST', `${ws()}/webhooks/${created.body.endpointId}/rotate-secret`);
  secret = rotated.body.secret as string;
  return {
    endpointId: created.body.endpointId as string,
    /** The deliveries of events about `id` (an endpoint or a token). */
    about: (id: string) => [...seen.values()].filter((s) => s.payload.endpointId === id || s.payload.tokenId === id),
    seen,
    verifyFailures,
  };
}

/**
 * Creates an endpoint nobody receives on (the subject of the events), and waits until `sub` got its
 * `webhook.created`: the faults set after it touch only the events that follow.
 */
async function subject(sub: Awaited<ReturnType<typeof subscriber>>): Promise<string> {
  const created = await api.call('POST', `${ws()}/webhooks`, {
    body: { url: 'https://hooks.example.com/subject', eventTypes: ['webhook.test_event'] },
  });
  expect(created.status, created.text).toBe(201);
  const id = created.body.endpointId as string;
  await vi.waitFor(() => expect(sub.about(id)).toHaveLength(1), EVENTUALLY);
  return id;
}

/** Waits until the subscriber got `count` deliveries about `id`, then a little longer (a late duplicate would show). */
async function settled(sub: Awaited<ReturnType<typeof subscriber>>, id: string, count: number) {
  await vi.waitFor(() => expect(sub.about(id)).toHaveLength(count), EVENTUALLY);
  await new Promise((r) => setTimeout(r, 600));
  return sub.about(id);
}

describe('the outbox relay under faults', () => {
  it('a function that dies after its change committed: the event still arrives, once', async () => {
    const sub = await subscriber(['webhook.created', 'webhook.updated']);
    const faults = injectDynamoFaults(defaultRuntime().deps.table.doc);
    try {
      // The create's transaction (the endpoint, its audit and its event) is applied, then the answer is lost: the function fails after the commit.
      faults.fail({
        command: 'TransactWriteItemsCommand',
        when: (input) => JSON.stringify(input).includes('webhook.created'),
        times: 1,
        kind: '5xx',
        phase: 'after',
      });
      const created = await api.call('POST', `${ws()}/webhooks`, {
        body: { url: 'https://hooks.example.com/crashed', eventTypes: ['webhook.test_event'] },
      });
      expect(created.status).toBe(500);
      expect(faults.injected.get('TransactWriteItemsCommand')).toBe(1);
    } finally {
      faults.remove();
    }
    // The change stands (the endpoint exists), and its event reaches the subscriber.
    const list = await api.call('GET', `${ws()}/webhooks?limit=100`);
    const crashed = (list.body.items as { endpointId: string; url: string }[]).find((e) => e.url === 'https://hooks.example.com/crashed');
    expect(crashed).toBeDefined();
    const got = await settled(sub, crashed!.endpointId, 1);
    expect(got).toEqual([{ type: 'webhook.created', payload: expect.objectContaining({ endpointId: crashed!.endpointId }), posts: 1 }]);
    expect(sub.verifyFailures).toEqual([]);
  });

  it('a relay that fails three times, then succeeds: the event arrives once', async () => {
    const sub = await subscriber(['webhook.created', 'webhook.updated']);
    const id = await subject(sub);
    Object.assign(bus, { about: id, fail: 3, lose: 0, puts: 0 });
    expect((await api.call('PATCH', `${ws()}/webhooks/${id}`, { body: { description: 'after three failures' } })).status).toBe(200);
    const got = (await settled(sub, id, 2)).filter((s) => s.type === 'webhook.updated');
    expect(got).toEqual([
      { type: 'webhook.updated', payload: expect.objectContaining({ endpointId: id, changed: ['description'] }), posts: 1 },
    ]);
    // Three failed puts, then the one that went through.
    expect(bus.puts).toBe(4);
    expect(api.queues.outboxFailures.depth).toBe(0);
  });

  it('a relay that always fails: after its retries the records land in the on-failure queue, none delivered', async () => {
    const sub = await subscriber(['webhook.created', 'webhook.updated']);
    const id = await subject(sub);
    const depth = api.queues.outboxFailures.depth;
    Object.assign(bus, { about: id, fail: Infinity, lose: 0, puts: 0 });
    try {
      expect((await api.call('PATCH', `${ws()}/webhooks/${id}`, { body: { description: 'never relayed' } })).status).toBe(200);
      await vi.waitFor(() => expect(api.queues.outboxFailures.depth).toBe(depth + 1), EVENTUALLY);
    } finally {
      bus.fail = 0;
    }
    // The first try and every retry of the event source mapping, then given up.
    expect(bus.puts).toBe(OUTBOX.relay.retryAttempts + 1);
    expect(sub.about(id).map((s) => s.type)).toEqual(['webhook.created']);
    // The event is still in the outbox table, for the operator the alarm calls.
    const outbox = await withOutbox({ ...api.table, tableName: api.table.tableName });
    expect(
      (await outbox.outboxItems()).filter((i) => i.type === 'webhook.updated' && (i.payload as { endpointId: string }).endpointId === id),
    ).toHaveLength(1);
  });

  it('a relay duplicate (the records put, the answer lost, the records relayed again; then the same stream records once more): once per id', async () => {
    const sub = await subscriber(['webhook.created', 'webhook.updated']);
    const target = await subject(sub);
    Object.assign(bus, { about: target, fail: 0, lose: 1, puts: 0 });
    expect((await api.call('PATCH', `${ws()}/webhooks/${target}`, { body: { description: 'relayed twice' } })).status).toBe(200);
    await vi.waitFor(() => expect(bus.puts).toBe(2), EVENTUALLY);
    // One delivery id for the event, whatever number of POSTs carried it (a receiver dedupes on webhook-id).
    const got = await settled(sub, target, 2);
    expect(got.map((s) => s.type).sort()).toEqual(['webhook.created', 'webhook.updated']);

    // The same stream record handed to the relay again, as Lambda may after a retry: a new EventBridge id, the same outbox id.
    const id = await subject(sub);
    const outbox = await withOutbox(api.table);
    const item = (await outbox.outboxItems()).find(
      (i) => i.type === 'webhook.created' && (i.payload as { endpointId: string }).endpointId === id,
    )!;
    const relay = await loadHandler<(e: unknown) => Promise<{ batchItemFailures: unknown[] }>>('outbox-relay');
    const streamRecord = {
      eventName: 'INSERT',
      dynamodb: {
        SequenceNumber: '1',
        NewImage: {
          pk: { S: item.pk },
          workspace: { S: item.workspace },
          type: { S: item.type },
          payload: { S: JSON.stringify(item.payload) },
          createdAt: { S: item.createdAt },
        },
      },
    };
    expect(await relay({ Records: [streamRecord, streamRecord] })).toEqual({ batchItemFailures: [] });
    const again = await settled(sub, id, 1);
    // Delivered before the duplicates came: the publisher finds the delivery done and sends nothing.
    expect(again).toEqual([{ type: 'webhook.created', payload: expect.objectContaining({ endpointId: id }), posts: 1 }]);
    expect(sub.verifyFailures).toEqual([]);
  });
});
