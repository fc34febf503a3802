/**
 * Payload filters at the publisher (docs/behaviour.md#payload-filters): an event reaches only the
 * subscribers whose filter matches its payload (no row, no message, no held row for the others),
 * from the subscription items alone; test sends and replays are never filtered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_WORKSPACE_LIMITS } from '../../lambdas/contract/limits';
import type { Caller, OperationDeps } from '../../lambdas/operations/context';
import { replayWebhookDelivery, sendWebhookTestEvent } from '../../lambdas/operations/deliveries';
import { publishEvent } from '../../lambdas/pipeline/publisher';
import { getDelivery, recordObservation } from '../../lambdas/store/deliveries';
import { updateEndpoint } from '../../lambdas/store/endpoints';
import { capturingQueue, seedEndpoint, testCatalogue, testSealer } from '../helpers/pipeline';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

const eu = { orderId: { $prefix: 'eu-' } };
const us = { orderId: { $prefix: 'us-' } };

describe('the publisher with filters', () => {
  it('writes and queues only for endpoints whose filter matches, or that have none; nothing, held or not, for the others', async () => {
    const euEndpoint = await seedEndpoint(table, { workspace: 'flt', url: 'https://eu.example.com', options: { filter: eu } });
    const usEndpoint = await seedEndpoint(table, { workspace: 'flt', url: 'https://us.example.com', options: { filter: us } });
    const usDisabled = await seedEndpoint(table, {
      workspace: 'flt',
      url: 'https://us-off.example.com',
      enabled: false,
      options: { filter: us },
    });
    const all = await seedEndpoint(table, { workspace: 'flt', url: 'https://all.example.com' });
    const queue = capturingQueue();
    const deps = { table, queue, eventTypes: testCatalogue, now: () => new Date() };

    const euEvent = await publishEvent(deps, { workspace: 'flt', type: 'order.shipped', payload: { orderId: 'eu-1' } });
    expect(euEvent.heldDeliveryIds).toEqual([]);
    expect(queue.sent.map((m) => m.endpointId).sort()).toEqual([euEndpoint.endpointId, all.endpointId].sort());
    const rows = await Promise.all(euEvent.deliveryIds.map((id) => getDelivery(table, id)));
    expect(rows.map((r) => r!.endpointId).sort()).toEqual([euEndpoint.endpointId, all.endpointId].sort());

    queue.sent.length = 0;
    const usEvent = await publishEvent(deps, { workspace: 'flt', type: 'order.shipped', payload: { orderId: 'us-9' } });
    expect(queue.sent.map((m) => m.endpointId).sort()).toEqual([usEndpoint.endpointId, all.endpointId].sort());
    // The disabled endpoint's filter matches: its event is held, as without a filter.
    expect(usEvent.heldDeliveryIds).toHaveLength(1);
    expect((await getDelivery(table, usEvent.heldDeliveryIds[0]!))!.endpointId).toBe(usDisabled.endpointId);

    // A changed filter applies from the next event on (the subscription copies carry it).
    await updateEndpoint(table, 'flt', euEndpoint.endpointId, { filter: { orderId: 'eu-2' } }, new Date(), {
      action: 'webhook.updated',
      actor: 'test',
      targetId: euEndpoint.endpointId,
    });
    queue.sent.length = 0;
    await publishEvent(deps, { workspace: 'flt', type: 'order.shipped', payload: { orderId: 'eu-1' } });
    expect(queue.sent.map((m) => m.endpointId)).toEqual([all.endpointId]);
  });

  it('never filters a test send or a replay', async () => {
    const filtered = await seedEndpoint(table, {
      workspace: 'flt-ops',
      url: 'https://x.example.com',
      options: { filter: { never: true } },
    });
    const caller: Caller = { workspace: 'flt-ops', tokenId: 'tok_admin', scopes: ['admin'] };
    const queue = capturingQueue();
    const deps: OperationDeps = {
      table,
      now: () => new Date(),
      eventTypes: testCatalogue,
      urlPolicy: {},
      queue,
      secretSealer: testSealer,
      workspaceLimits: DEFAULT_WORKSPACE_LIMITS,
    };
    const sent = await sendWebhookTestEvent(deps, caller, {
      params: { slug: 'flt-ops', endpointId: filtered.endpointId },
      query: undefined,
      body: undefined,
    });
    expect(queue.sent.map((m) => m.deliveryId)).toEqual([sent.deliveryId]);

    // The test send fails for good; its replay is queued though the filter matches no payload.
    const record = (await getDelivery(table, sent.deliveryId))!;
    await recordObservation(
      table,
      {
        delivery: record,
        endpoint: filtered,
        attempt: {
          outcome: 'failed_permanent',
          timestamp: new Date().toISOString(),
          durationMs: 5,
          failureReason: 'http_410',
          requestHeaders: {},
          responseStatus: 410,
          responseBody: null,
        },
        status: 'failed_permanent',
        http: true,
        nextAttemptAt: null,
        streak: 'none',
      },
      new Date(),
    );
    const replay = await replayWebhookDelivery(deps, caller, {
      params: { slug: 'flt-ops', deliveryId: sent.deliveryId },
      query: undefined,
      body: undefined,
    });
    expect(queue.sent.map((m) => m.deliveryId)).toEqual([sent.deliveryId, replay.deliveryId]);
  });
});
