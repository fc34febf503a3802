/**
 * The outbox (docs/architecture.md#outbox) on DynamoDB Local: each change that reports a domain
 * event writes it in its own transaction (with its audit event, under the audit event's id), and
 * only when the change is written; the relay puts stream records on the bus in order, reporting
 * from the first one not put; the EventBridge adapter carries the outbox id and the change's time;
 * the publisher derives the deliveries of the service's own events from the outbox id, so a relayed
 * duplicate (a new EventBridge id) creates nothing new.
 */
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../lambdas/contract/errors';
import { DEFAULT_WORKSPACE_LIMITS } from '../../lambdas/contract/limits';
import { createApiToken, revokeApiToken } from '../../lambdas/operations/api-tokens';
import type { Caller, OperationDeps } from '../../lambdas/operations/context';
import { createWebhook, deleteWebhook, rotateWebhookSecret, updateWebhook } from '../../lambdas/operations/webhooks';
import { relayOutboxRecords, type OutboxStreamRecord } from '../../lambdas/pipeline/outbox-relay';
import { busEventToPublish, publishEvent } from '../../lambdas/pipeline/publisher';
import { eventBridgeBus, type BusEvent, type DomainEventBus } from '../../lambdas/queue/domain-events';
import { listAuditEvents } from '../../lambdas/store/audit';
import { createEventCatalogue } from '../../lambdas/domain/event-catalogue';
import { ensureWorkspace } from '../../lambdas/operations/admin';
import { capturingQueue, testCatalogue, testSealer } from '../helpers/pipeline';
import { withOutbox } from '../helpers/outbox';
import { freshTable } from '../helpers/table';

let base: Awaited<ReturnType<typeof freshTable>>;
let table: Awaited<ReturnType<typeof withOutbox>>;
beforeAll(async () => {
  base = await freshTable();
  table = await withOutbox(base);
});
afterAll(async () => {
  await table?.dropOutbox();
  await base?.drop();
});

const clock = new Date();
let n = 0;
const caller = (workspace: string): Caller => ({ workspace, tokenId: 'tok_admin', scopes: ['admin'] });
const deps = (limits: Partial<typeof DEFAULT_WORKSPACE_LIMITS> = {}): OperationDeps => ({
  table,
  now: () => clock,
  eventTypes: testCatalogue,
  urlPolicy: {},
  queue: capturingQueue(),
  secretSealer: testSealer,
  workspaceLimits: { ...DEFAULT_WORKSPACE_LIMITS, ...limits },
});

describe('the outbox write', () => {
  it('writes each change’s event with the change, under its audit event’s id, and none for a change refused', async () => {
    const ws = `obx-${++n}`;
    const created = await createWebhook(deps(), caller(ws), {
      params: { slug: ws },
      query: undefined,
      body: { url: 'https://hooks.example.com/in/secret-path?k=v', eventTypes: ['webhook.test_event'] },
    });
    await updateWebhook(deps(), caller(ws), {
      params: { slug: ws, endpointId: created.endpointId },
      query: undefined,
      body: { description: 'x' },
    });
    await rotateWebhookSecret(deps(), caller(ws), {
      params: { slug: ws, endpointId: created.endpointId },
      query: undefined,
      body: {},
    } as never);
    const token = await createApiToken(deps(), caller(ws), {
      params: { slug: ws },
      query: undefined,
      body: { name: 'ci', scopes: ['read'] },
    } as never);
    await revokeApiToken(deps(), caller(ws), { params: { slug: ws, tokenId: token.tokenId }, query: undefined, body: undefined });
    await deleteWebhook(deps(), caller(ws), {
      params: { slug: ws, endpointId: created.endpointId },
      query: undefined,
      body: undefined,
    });
    // Refused changes: an endpoint over the limit, a token that does not exist.
    await expect(
      createWebhook(deps({ endpoints: 0 }), caller(ws), {
        params: { slug: ws },
        query: undefined,
        body: { url: 'https://hooks.example.com/b', eventTypes: ['webhook.test_event'] },
      }),
    ).rejects.toBeInstanceOf(AppError);
    await expect(
      revokeApiToken(deps(), caller(ws), {
        params: { slug: ws, tokenId: 'tok_01ARZ3NDEKTSV4RRFFQ69G5FAV' },
        query: undefined,
        body: undefined,
      }),
    ).rejects.toBeInstanceOf(AppError);

    const items = (await table.outboxItems()).filter((i) => i.workspace === ws);
    expect(items.map((i) => i.type).sort()).toEqual(
      ['api_token.created', 'api_token.revoked', 'webhook.created', 'webhook.deleted', 'webhook.secret_rotated', 'webhook.updated'].sort(),
    );
    const byType = Object.fromEntries(items.map((i) => [i.type, i]));
    // Redacted as every event names a URL: scheme://host/… only.
    expect(byType['webhook.created']!.payload).toEqual({
      endpointId: created.endpointId,
      url: 'https://hooks.example.com/…',
      eventTypes: ['webhook.test_event'],
    });
    expect(byType['webhook.updated']!.payload).toEqual({
      endpointId: created.endpointId,
      url: 'https://hooks.example.com/…',
      changed: ['description'],
    });
    expect(byType['api_token.revoked']!.payload).toEqual({ tokenId: token.tokenId });
    expect(JSON.stringify(items)).not.toMatch(/secret-path|k=v|whsec_/);
    // One event per audited change, under the audit event's id.
    const audits = (await listAuditEvents(table, ws, 50)).items;
    for (const item of items) expect(audits.find((a) => a.auditEventId === item.pk)?.action).toBe(item.type);
  });

  it('writes no event when the change’s transaction fails, and the change is not written either', async () => {
    const ws = `obx-${++n}`;
    await ensureWorkspace(table, ws, 'x');
    // The outbox item's put fails (its table is missing): the whole change is cancelled.
    const failing = { ...table, outboxTableName: `${table.tableName}-missing` };
    await expect(
      createWebhook({ ...deps(), table: failing }, caller(ws), {
        params: { slug: ws },
        query: undefined,
        body: { url: 'https://hooks.example.com/c', eventTypes: ['webhook.test_event'] },
      }),
    ).rejects.toThrow();
    expect((await listAuditEvents(table, ws, 10)).items).toEqual([]);
    expect((await table.outboxItems()).filter((i) => i.workspace === ws)).toEqual([]);
  });

  it('deletes an endpoint of the most event types one transaction takes, its event included', async () => {
    const ws = `obx-${++n}`;
    // The endpoint item, its grace entry, the counter, the audit and the outbox item, with 95 subscription items: 100.
    const many = Array.from({ length: 95 }, (_, i) => `t.n${String(i).padStart(3, '0')}`);
    const catalogue = createEventCatalogue(many.map((name) => ({ name, description: name, payloadSchema: { type: 'object' } })));
    const wide = { ...deps(), eventTypes: catalogue };
    const created = await createWebhook(wide, caller(ws), {
      params: { slug: ws },
      query: undefined,
      body: { url: 'https://hooks.example.com/many', eventTypes: many },
    });
    await deleteWebhook(wide, caller(ws), {
      params: { slug: ws, endpointId: created.endpointId },
      query: undefined,
      body: undefined,
    });
    expect((await table.outboxItems()).filter((i) => i.workspace === ws).map((i) => i.type)).toContain('webhook.deleted');
  });
});

/** A stream record of an outbox item, as DynamoDB Streams delivers it. */
function record(event: BusEvent, sequenceNumber: string, eventName = 'INSERT'): OutboxStreamRecord {
  return {
    eventName,
    dynamodb: {
      SequenceNumber: sequenceNumber,
      NewImage: {
        pk: { S: event.outboxId },
        workspace: { S: event.workspace },
        type: { S: event.type },
        payload: { S: event.payloadJson },
        createdAt: { S: event.createdAt },
      },
    },
  };
}

const event = (i: number): BusEvent => ({
  outboxId: `aud_${String(i).padStart(26, '0')}`,
  workspace: 'ws',
  type: 'webhook.created',
  payloadJson: JSON.stringify({ endpointId: `whe_${i}`, url: 'https://h/…', eventTypes: [] }),
  createdAt: '2026-01-02T03:04:05.000Z',
});

const silent = { warn: () => undefined, error: () => undefined };

describe('the relay', () => {
  it('puts inserts in stream order, ten per request, passing over removals and records that are not events', async () => {
    const puts: string[][] = [];
    const bus: DomainEventBus = {
      put: async (events) => {
        puts.push(events.map((e) => e.outboxId));
        return events.map(() => null);
      },
    };
    const records = [
      ...Array.from({ length: 12 }, (_, i) => record(event(i), String(100 + i))),
      record(event(99), '200', 'REMOVE'),
      { eventName: 'INSERT', dynamodb: { SequenceNumber: '201', NewImage: { pk: { S: 'x' } } } },
    ];
    const errors: string[] = [];
    const result = await relayOutboxRecords({ bus, log: { ...silent, error: (m) => void errors.push(m) } }, records);
    expect(result.batchItemFailures).toEqual([]);
    expect(puts).toEqual([Array.from({ length: 10 }, (_, i) => event(i).outboxId), [event(10).outboxId, event(11).outboxId]]);
    expect(errors).toEqual(['Outbox record is not an event']);
  });

  it('reports the first event not put (a refused entry, or a failed request), and puts nothing after it', async () => {
    const refusing: DomainEventBus = { put: async (events) => events.map((e, i) => (i === 2 ? 'ThrottlingException: slow down' : null)) };
    const records = Array.from({ length: 5 }, (_, i) => record(event(i), String(10 + i)));
    expect((await relayOutboxRecords({ bus: refusing, log: silent }, records)).batchItemFailures).toEqual([{ itemIdentifier: '12' }]);
    let calls = 0;
    const down: DomainEventBus = {
      put: async () => {
        calls++;
        throw new Error('network');
      },
    };
    const many = Array.from({ length: 15 }, (_, i) => record(event(i), String(10 + i)));
    expect((await relayOutboxRecords({ bus: down, log: silent }, many)).batchItemFailures).toEqual([{ itemIdentifier: '10' }]);
    expect(calls).toBe(1);
  });
});

describe('the EventBridge bus', () => {
  it('puts source webhooks.service, the type, the change’s time and a detail that carries the outbox id and the payload as written', async () => {
    const eb = mockClient(EventBridgeClient);
    eb.on(PutEventsCommand).resolves({
      FailedEntryCount: 1,
      Entries: [{ EventId: 'e1' }, { ErrorCode: 'InternalFailure', ErrorMessage: 'x' }],
    });
    const bus = eventBridgeBus(new EventBridgeClient({ region: 'us-east-1' }), 'bus-1');
    const results = await bus.put([event(1), { ...event(2), payloadJson: '{"b":1,"a":[1,2]}' }]);
    expect(results).toEqual([null, 'InternalFailure: x']);
    const entries = eb.commandCalls(PutEventsCommand)[0]!.args[0].input.Entries!;
    expect(entries[0]).toMatchObject({ EventBusName: 'bus-1', Source: 'webhooks.service', DetailType: 'webhook.created' });
    expect(entries[0]!.Time?.toISOString()).toBe('2026-01-02T03:04:05.000Z');
    expect(JSON.parse(entries[0]!.Detail!)).toEqual({
      workspace: 'ws',
      outboxId: event(1).outboxId,
      payload: JSON.parse(event(1).payloadJson),
    });
    expect(entries[1]!.Detail).toBe(`{"workspace":"ws","outboxId":"${event(2).outboxId}","payload":{"b":1,"a":[1,2]}}`);
    eb.restore();
  });
});

describe('the publisher, for the service’s own events', () => {
  it('derives deliveries from the outbox id: a relayed duplicate (a new EventBridge id) creates nothing new', async () => {
    const ws = `obx-${++n}`;
    await ensureWorkspace(table, ws, 'x');
    const endpoint = await createWebhook(deps(), caller(ws), {
      params: { slug: ws },
      query: undefined,
      body: { url: 'https://hooks.example.com/sub', eventTypes: ['webhook.created'] },
    });
    const detail = {
      workspace: ws,
      outboxId: 'aud_01ARZ3NDEKTSV4RRFFQ69G5FAV',
      payload: { endpointId: endpoint.endpointId, url: 'https://h/…', eventTypes: [] },
    };
    const bus = (id: string, source = 'webhooks.service') => ({
      id,
      source,
      time: '2026-01-02T03:04:05.000Z',
      'detail-type': 'webhook.created',
      detail,
    });
    expect(busEventToPublish(bus('eb-1'))).toMatchObject({ id: detail.outboxId, workspace: ws, type: 'webhook.created' });
    // Another producer's `outboxId` is just a field: its deliveries derive from EventBridge's id.
    expect(busEventToPublish(bus('eb-1', 'orders.service')).id).toBe('eb-1');
    const queue = capturingQueue();
    const publish = { table, queue, eventTypes: testCatalogue, now: () => clock };
    const first = await publishEvent(publish, busEventToPublish(bus('eb-1')));
    const second = await publishEvent(publish, busEventToPublish(bus('eb-2')));
    expect(first.deliveryIds).toHaveLength(1);
    expect(second.deliveryIds).toEqual(first.deliveryIds);
  });
});
