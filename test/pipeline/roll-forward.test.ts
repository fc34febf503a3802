/**
 * The recording write path (docs/architecture.md#delivery-items), against DynamoDB Local and real
 * loopback receivers: the attempt is written first and the state catches up from it. A crash
 * between the two (an injected DynamoDB fault on the state write) is completed by the next
 * receive from the stored attempt, with no second POST; the streak and a disable apply once; a
 * first-try delivery writes two single items and no transaction.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DISABLE_THRESHOLD } from '../../lambdas/domain/delivery-lifecycle';
import { dispatchDelivery, type DispatchDeps } from '../../lambdas/pipeline/dispatcher';
import { createHttpSender } from '../../lambdas/pipeline/http-sender';
import { publishEvent } from '../../lambdas/pipeline/publisher';
import { listAuditEvents } from '../../lambdas/store/audit';
import { getDelivery, listAttempts, readDelivery } from '../../lambdas/store/deliveries';
import { getEndpointRecord } from '../../lambdas/store/endpoints';
import { injectDynamoFaults } from '../faults/dynamo-faults';
import { capturingQueue, seedEndpoint, testCatalogue } from '../helpers/pipeline';
import { scriptedReceiver } from '../helpers/scripted-receiver';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
const stops: (() => Promise<void>)[] = [];
const clock = () => new Date();

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
    now: clock,
    sender: createHttpSender({ deadlineMs: 1500, bodyReadMs: 300, bodyCapBytes: 2048 }),
    resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    urlPolicy: { allowLoopback: true },
  };
}

async function receiver(status: number) {
  const r = await scriptedReceiver((_req, res) => res.writeHead(status).end());
  stops.push(() => r.stop());
  return r;
}

let n = 0;
async function published(url: string, consecutiveFailures = 0) {
  const workspace = `rf-${++n}`;
  const endpoint = await seedEndpoint(table, { workspace, url, consecutiveFailures });
  const { deliveryIds } = await publishEvent({ table, queue: capturingQueue(), eventTypes: testCatalogue, now: clock }, { workspace, type: 'order.shipped', payload: { orderId: `o-${n}` } });
  return { endpoint, deliveryId: deliveryIds[0]!, workspace };
}

/** True for a write of a delivery's state item (a put, or the first item of a transaction). */
const writesState = (input: Record<string, unknown>) => /"sk":(\{"S":)?"STATE"/.test(JSON.stringify(input));

/** Dispatches once with the state write failing (the container dies right after the attempt is stored). */
async function crashAtStateWrite(deliveryId: string, command: 'PutItemCommand' | 'TransactWriteItemsCommand') {
  const faults = injectDynamoFaults(table.doc);
  faults.fail({ command, when: writesState, times: 1, kind: '5xx' });
  try {
    await expect(dispatchDelivery(deps(), deliveryId)).rejects.toThrow(/injected server error/);
  } finally {
    faults.remove();
  }
}

describe('a crash between the attempt and the state', () => {
  it('after a 2xx: the next receive completes the record from the attempt, and the receiver sees one POST', async () => {
    const r = await receiver(204);
    const { deliveryId } = await published(r.url);
    await crashAtStateWrite(deliveryId, 'PutItemCommand');
    expect(r.seen).toHaveLength(1);
    // The attempt is stored; the state has not caught up.
    const torn = await readDelivery(table, deliveryId);
    expect(torn?.record).toMatchObject({ status: 'pending', attempts: 0, evidenceCount: 0 });
    expect(torn?.unapplied).toMatchObject({ attempt: { ordinal: 1, outcome: 'delivered', responseStatus: 204 }, applies: { status: 'delivered', http: true } });

    const next = await dispatchDelivery(deps(), deliveryId);
    expect(next).toMatchObject({ kind: 'ack', reason: 'delivered', recorded: { outcome: 'delivered', responseStatus: 204 } });
    expect(r.seen).toHaveLength(1);
    expect(await getDelivery(table, deliveryId)).toMatchObject({ status: 'delivered', attempts: 1, evidenceCount: 1, lastResponseStatus: 204 });
    expect((await listAttempts(table, deliveryId, 10)).items).toHaveLength(1);
    // A late duplicate of the message changes nothing and sends nothing.
    expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'ack', reason: 'already_terminal' });
    expect(r.seen).toHaveLength(1);
  });

  it('after a 503: the next receive schedules the retry the attempt decided, with no second POST', async () => {
    const r = await receiver(503);
    const { endpoint, deliveryId } = await published(r.url);
    await crashAtStateWrite(deliveryId, 'TransactWriteItemsCommand');
    const next = await dispatchDelivery(deps(), deliveryId);
    expect(next).toMatchObject({ kind: 'retry' });
    expect(next.kind === 'retry' && next.delaySeconds).toBeGreaterThan(20);
    expect(r.seen).toHaveLength(1);
    expect(await getDelivery(table, deliveryId)).toMatchObject({ status: 'failed', attempts: 1, evidenceCount: 1, lastResponseStatus: 503, lastError: 'http_503' });
    expect((await getEndpointRecord(table, endpoint.workspace, endpoint.endpointId))?.consecutiveFailures).toBe(1);
  });

  it('at the disable threshold: the streak steps once and the endpoint is disabled once, with one audit', async () => {
    const r = await receiver(500);
    const { endpoint, deliveryId, workspace } = await published(r.url, DISABLE_THRESHOLD - 1);
    await crashAtStateWrite(deliveryId, 'TransactWriteItemsCommand');
    expect((await getEndpointRecord(table, workspace, endpoint.endpointId))).toMatchObject({ consecutiveFailures: DISABLE_THRESHOLD - 1, enabled: true });
    // Two receives of the message at once both find the torn record.
    const results = await Promise.all([dispatchDelivery(deps(), deliveryId), dispatchDelivery(deps(), deliveryId)]);
    expect(results.filter((x) => x.disabled)).toHaveLength(1);
    expect(r.seen).toHaveLength(1);
    expect(await getEndpointRecord(table, workspace, endpoint.endpointId)).toMatchObject({ consecutiveFailures: DISABLE_THRESHOLD, enabled: false });
    expect((await listAuditEvents(table, workspace, 50)).items.filter((a) => a.action === 'webhook.disabled')).toHaveLength(1);
    expect((await listAttempts(table, deliveryId, 10)).items).toHaveLength(1);
  });
});

describe('what a first-try delivery writes', () => {
  it('the attempt and the state, two single-item puts: no transaction, nothing else', async () => {
    const r = await receiver(200);
    const { deliveryId } = await published(r.url);
    const counted = injectDynamoFaults(table.doc);
    try {
      expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'ack', reason: 'delivered' });
      const writes = [...counted.calls].filter(([command]) => /Put|Update|Delete|Transact|BatchWrite/.test(command));
      expect(writes).toEqual([['PutItemCommand', 2]]);
    } finally {
      counted.remove();
    }
  });
});
