/**
 * The auto-disable's notification and `webhook.disabled` event name the endpoint by
 * scheme://host/… only (docs/behaviour.md#url-redaction), on DynamoDB Local with a loopback receiver.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dispatchDelivery } from '../../lambdas/pipeline/dispatcher';
import { createHttpSender } from '../../lambdas/pipeline/http-sender';
import { publishEvent } from '../../lambdas/pipeline/publisher';
import { listNotifications } from '../../lambdas/store/notifications';
import { capturingQueue, seedEndpoint, testCatalogue, testSealer } from '../helpers/pipeline';
import { scriptedReceiver } from '../helpers/scripted-receiver';
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

it('the disable notification and webhook.disabled carry scheme://host/…, never the secret path or query', async () => {
  const r = await scriptedReceiver((_req, res) => res.writeHead(500).end());
  try {
    const port = new URL(r.url).port;
    const workspace = 'ws-disable-redaction';
    const clock = new Date();
    const endpoint = await seedEndpoint(
      table,
      { workspace, url: `http://127.0.0.1:${port}/in/cap-7f3a9c1e5b?token=abc`, consecutiveFailures: 19 },
      clock,
    );
    const { deliveryIds } = await publishEvent(
      { table, queue: capturingQueue(), eventTypes: testCatalogue, now: () => clock },
      { workspace, type: 'order.shipped', payload: { orderId: 'o-1' } },
    );
    await dispatchDelivery(
      {
        table,
        now: () => clock,
        sender: createHttpSender({ deadlineMs: 1500, bodyReadMs: 300, bodyCapBytes: 2048 }),
        resolve: async () => [{ address: '127.0.0.1', family: 4 }],
        urlPolicy: { allowLoopback: true },
        secrets: testSealer,
      },
      deliveryIds[0]!,
    );
    expect(r.seen[0]!.path).toBe('/in/cap-7f3a9c1e5b?token=abc');
    const note = (await listNotifications(table, workspace, 5)).items.find((x) => x.kind === 'endpoint.disabled')!;
    expect(note.message).toContain(`Webhook endpoint http://127.0.0.1:${port}/… was disabled`);
    // Written with the disable itself, in the outbox (docs/architecture.md#outbox).
    const emitted = (await table.outboxItems()).map(({ type, payload }) => ({ type, payload }));
    expect(emitted).toEqual([
      {
        type: 'webhook.disabled',
        payload: { endpointId: endpoint.endpointId, url: `http://127.0.0.1:${port}/…`, consecutiveFailures: 20 },
      },
    ]);
    expect(JSON.stringify([note, emitted])).not.toMatch(/cap-7f3a9c1e5b|token=abc/);
  } finally {
    await r.stop();
  }
});
