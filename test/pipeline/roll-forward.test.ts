/**
 * The recording write path (docs/architecture.md#delivery-items), against DynamoDB Local and real
 * loopback receivers: the attempt is written first and the state catches up from it. A crash
 * between the two (an injected DynamoDB fault on the state write) is completed by the next
 * receive from the stored attempt, with no second POST; the streak and a disable apply once; a
 * first-try delivery writes one item (the state, holding the first attempt) and no transaction.
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
import { capturingQueue, seedEndpoint, testCatalogue, testSealer } from '../helpers/pipeline';
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
    secrets: testSealer,
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
  const { deliveryIds } = await publishEvent(
    { table, queue: capturingQueue(), eventTypes: testCatalogue, now: clock },
    { workspace, type: 'order.shipped', payload: { orderId: `o-${n}` } },
  );
  return { endpoint, deliveryId: deliveryIds[0]!, workspace };
}

/** True for a write of a delivery's state item (an update, or the first item of a transaction). */
const writesState = (input: Record<string, unknown>) => /"sk":(\{"S":)?"STATE"/.test(JSON.stringify(input));

/** Dispatches once with the state write failing (the container dies right after the attempt is stored). */
async function crashAtStateWrite(deliveryId: string) {
  const faults = injectDynamoFaults(table.doc);
  // Whichever command writes the state (alone, or in a transaction with the streak): armed for this one receive only.
  faults.fail({ command: 'UpdateItemCommand', when: writesState, times: 1, kind: '5xx' });
  faults.fail({ command: 'TransactWriteItemsCommand', when: writesState, times: 1, kind: '5xx' });
  try {
    await expect(dispatchDelivery(deps(), deliveryId)).rejects.toThrow(/injected server error/);
  } finally {
    faults.remove();
  }
}

/** A receiver answering 503 to the first POST, then `status`. */
async function failsOnceThen(status: number) {
  const r = await scriptedReceiver((_req, res, n) => res.writeHead(n === 1 ? 503 : status).end());
  stops.push(() => r.stop());
  return r;
}

// The first attempt is written inside the state's own first write (nothing to tear), so the
// crash window between an attempt and its state is that of every later attempt.
describe('a crash between the attempt and the state (a retry)', () => {
  it('after a 2xx: the next receive completes the record from the attempt, and the receiver sees no further POST', async () => {
    const r = await failsOnceThen(204);
    const { deliveryId } = await published(r.url);
    expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'retry' });
    await crashAtStateWrite(deliveryId);
    expect(r.seen).toHaveLength(2);
    // The attempt is stored; the state has not caught up.
    const torn = await readDelivery(table, deliveryId);
    expect(torn?.record).toMatchObject({ status: 'failed', attempts: 1, evidenceCount: 1 });
    expect(torn?.unapplied).toMatchObject({
      attempt: { ordinal: 2, outcome: 'delivered', responseStatus: 204 },
      applies: { status: 'delivered', http: true },
    });

    const next = await dispatchDelivery(deps(), deliveryId);
    expect(next).toMatchObject({ kind: 'ack', reason: 'delivered', recorded: { outcome: 'delivered', responseStatus: 204 } });
    expect(r.seen).toHaveLength(2);
    expect(await getDelivery(table, deliveryId)).toMatchObject({
      status: 'delivered',
      attempts: 2,
      evidenceCount: 2,
      lastResponseStatus: 204,
    });
    expect((await listAttempts(table, deliveryId, 10)).items.map((a) => [a.ordinal, a.responseStatus])).toEqual([
      [1, 503],
      [2, 204],
    ]);
    // A late duplicate of the message changes nothing and sends nothing.
    expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'ack', reason: 'already_terminal' });
    expect(r.seen).toHaveLength(2);
  });

  it('after a 503: the next receive schedules the retry the attempt decided, with no further POST', async () => {
    const r = await receiver(503);
    const { endpoint, deliveryId } = await published(r.url);
    expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'retry' });
    await crashAtStateWrite(deliveryId);
    const next = await dispatchDelivery(deps(), deliveryId);
    expect(next).toMatchObject({ kind: 'retry' });
    expect(next.kind === 'retry' && next.delaySeconds).toBeGreaterThan(20);
    expect(r.seen).toHaveLength(2);
    expect(await getDelivery(table, deliveryId)).toMatchObject({
      status: 'failed',
      attempts: 2,
      evidenceCount: 2,
      lastResponseStatus: 503,
      lastError: 'http_503',
    });
    expect((await getEndpointRecord(table, endpoint.workspace, endpoint.endpointId))?.consecutiveFailures).toBe(2);
  });

  it('at the disable threshold: the streak steps once and the endpoint is disabled once, with one audit', async () => {
    const r = await receiver(500);
    const { endpoint, deliveryId, workspace } = await published(r.url, DISABLE_THRESHOLD - 2);
    expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'retry' });
    await crashAtStateWrite(deliveryId);
    expect(await getEndpointRecord(table, workspace, endpoint.endpointId)).toMatchObject({
      consecutiveFailures: DISABLE_THRESHOLD - 1,
      enabled: true,
    });
    // Two receives of the message at once both find the torn record.
    const results = await Promise.all([dispatchDelivery(deps(), deliveryId), dispatchDelivery(deps(), deliveryId)]);
    expect(results.filter((x) => x.disabled)).toHaveLength(1);
    expect(r.seen).toHaveLength(2);
    expect(await getEndpointRecord(table, workspace, endpoint.endpointId)).toMatchObject({
      consecutiveFailures: DISABLE_THRESHOLD,
      enabled: false,
    });
    expect((await listAuditEvents(table, workspace, 50)).items.filter((a) => a.action === 'webhook.disabled')).toHaveLength(1);
    expect((await listAttempts(table, deliveryId, 10)).items).toHaveLength(2);
  });
});

describe('the first attempt, written with the state', () => {
  it('a first-try delivery is one single-item write: no transaction, nothing else', async () => {
    const r = await receiver(200);
    const { deliveryId } = await published(r.url);
    const counted = injectDynamoFaults(table.doc);
    try {
      expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'ack', reason: 'delivered' });
      const writes = [...counted.calls].filter(([command]) => /Put|Update|Delete|Transact|BatchWrite/.test(command));
      expect(writes).toEqual([['UpdateItemCommand', 1]]);
    } finally {
      counted.remove();
    }
    expect((await listAttempts(table, deliveryId, 10)).items).toMatchObject([{ ordinal: 1, outcome: 'delivered', responseStatus: 200 }]);
  });

  it('a crash at that write leaves nothing recorded: the next receive POSTs again under the same id and records one attempt', async () => {
    const r = await receiver(204);
    const { deliveryId } = await published(r.url);
    await crashAtStateWrite(deliveryId);
    expect(await readDelivery(table, deliveryId)).toMatchObject({ record: { status: 'pending', evidenceCount: 0 }, unapplied: null });
    expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'ack', reason: 'delivered' });
    expect(r.seen.map((req) => req.headers['webhook-id'])).toEqual([deliveryId, deliveryId]);
    expect((await listAttempts(table, deliveryId, 10)).items).toHaveLength(1);
  });

  it('a first attempt that moves the streak is stored before its transaction: a crash there is completed by the next receive, no second POST', async () => {
    const r = await receiver(503);
    const { endpoint, deliveryId } = await published(r.url);
    await crashAtStateWrite(deliveryId);
    expect(await readDelivery(table, deliveryId)).toMatchObject({
      record: { evidenceCount: 0 },
      unapplied: { attempt: { ordinal: 1, responseStatus: 503 } },
    });
    expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'retry' });
    expect(r.seen).toHaveLength(1);
    expect(await getDelivery(table, deliveryId)).toMatchObject({ status: 'failed', attempts: 1, evidenceCount: 1 });
    expect((await getEndpointRecord(table, endpoint.workspace, endpoint.endpointId))?.consecutiveFailures).toBe(1);
  });

  it('many failing first attempts on one endpoint at once (a batch read it once): each POSTed once, every one recorded, the streak counted once each', async () => {
    const r = await receiver(503);
    const workspace = `rf-${++n}`;
    const endpoint = await seedEndpoint(table, { workspace, url: r.url });
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const { deliveryIds } = await publishEvent(
        { table, queue: capturingQueue(), eventTypes: testCatalogue, now: clock },
        { workspace, type: 'order.shipped', payload: { orderId: `o-${n}-${i}` } },
      );
      ids.push(...deliveryIds);
    }
    // Every record of the batch sees the endpoint as the batch read it: their streak updates contend.
    const batch = { ...deps(), endpoint: async () => endpoint };
    const first = await Promise.allSettled(ids.map((id) => dispatchDelivery(batch, id)));
    // Those whose streak update lost five times come back (the message's next receive): no POST again.
    const again = ids.filter((_, i) => first[i]!.status === 'rejected');
    await Promise.all(again.map((id) => dispatchDelivery(deps(), id)));
    expect(r.seen).toHaveLength(ids.length);
    for (const id of ids) expect(await getDelivery(table, id)).toMatchObject({ status: 'failed', attempts: 1, evidenceCount: 1 });
    expect((await getEndpointRecord(table, workspace, endpoint.endpointId))?.consecutiveFailures).toBe(ids.length);
  });

  it("a streak update refused because another record's transaction was moving the endpoint is applied again at once: no error, no second POST", async () => {
    const r = await receiver(503);
    const { endpoint, deliveryId } = await published(r.url);
    const faults = injectDynamoFaults(table.doc);
    faults.fail({ command: 'TransactWriteItemsCommand', when: writesState, times: 2, kind: 'conflict' });
    try {
      expect(await dispatchDelivery(deps(), deliveryId)).toMatchObject({ kind: 'retry' });
      expect(faults.injected.get('TransactWriteItemsCommand')).toBe(2);
    } finally {
      faults.remove();
    }
    expect(r.seen).toHaveLength(1);
    expect(await getDelivery(table, deliveryId)).toMatchObject({ status: 'failed', attempts: 1, evidenceCount: 1 });
    expect((await getEndpointRecord(table, endpoint.workspace, endpoint.endpointId))?.consecutiveFailures).toBe(1);
  });

  it('two receives of a first attempt at once: one observation wins, whatever each receiver answered', async () => {
    // The first POST is slow and fails, the second is quick and succeeds: both race to the one write.
    const r = await scriptedReceiver((_req, res, n) => void setTimeout(() => res.writeHead(n === 1 ? 503 : 200).end(), n === 1 ? 150 : 0));
    stops.push(() => r.stop());
    const { endpoint, deliveryId, workspace } = await published(r.url);
    const results = await Promise.all([dispatchDelivery(deps(), deliveryId), dispatchDelivery(deps(), deliveryId)]);
    expect(r.seen).toHaveLength(2);
    const attempts = (await listAttempts(table, deliveryId, 10)).items;
    expect(attempts).toHaveLength(1);
    const delivery = await getDelivery(table, deliveryId);
    expect(delivery).toMatchObject({ evidenceCount: 1, attempts: 1, status: attempts[0]!.outcome });
    expect(results.filter((x) => 'recorded' in x && x.recorded)).toHaveLength(1);
    // The loser changed no streak: the winner's outcome alone decides it.
    expect((await getEndpointRecord(table, workspace, endpoint.endpointId))?.consecutiveFailures).toBe(
      attempts[0]!.outcome === 'delivered' ? 0 : 1,
    );
  });

  it('attempts page by ordinal across the first (in the state) and the others (their own items)', async () => {
    const r = await scriptedReceiver((_req, res, n) => res.writeHead(n < 3 ? 503 : 200).end());
    stops.push(() => r.stop());
    const { deliveryId } = await published(r.url);
    for (let i = 0; i < 3; i++) await dispatchDelivery(deps(), deliveryId);
    const seen: number[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page++) {
      const out = await listAttempts(table, deliveryId, 1, cursor);
      seen.push(...out.items.map((a) => a.ordinal));
      if (!out.nextCursor) break;
      cursor = out.nextCursor;
    }
    expect(seen).toEqual([1, 2, 3]);
    expect((await listAttempts(table, deliveryId, 2)).items.map((a) => a.ordinal)).toEqual([1, 2]);
    expect((await listAttempts(table, deliveryId, 3)).nextCursor).toBeNull();
  });
});
