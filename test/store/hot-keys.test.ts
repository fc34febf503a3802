/**
 * Hot partitions (docs/architecture.md#hot-keys): the table's key functions under the traffic of
 * 10,000 deliveries a second, one busy workspace sending half of it to a single endpoint and the
 * other half spread over 2,000 workspaces. Writes are counted per partition key and index for one
 * second of that traffic (the keys carry no time coarser than the hour, so every second of a day
 * looks alike), each delivery delivered first try, one in a hundred queued by the API; DynamoDB takes about 1,000 writes a second per
 * partition key, on the table and on each index.
 */
import { describe, expect, it } from 'vitest';
import type { DeliveryRecord } from '../../lambdas/domain/delivery-lifecycle';
import { newId } from '../../lambdas/domain/ids';
import { DISPATCHER_CONSUMER } from '../../lambdas/contract/deployment';
import { summaryItem, stateItem } from '../../lambdas/store/deliveries';
import { ENDPOINT_DELIVERY_SHARDS, keys, TABLE } from '../../lambdas/store/table-schema';

const PER_SECOND = 10_000;
const PARTITION_WRITES_PER_SECOND = 1_000;
const start = Date.parse('2026-11-26T10:00:00Z');

/** One second of deliveries: half to the busy workspace's one endpoint, half over 2,000 workspaces. */
function oneSecond(): DeliveryRecord[] {
  return Array.from({ length: PER_SECOND }, (_, i) => {
    const at = new Date(start + Math.floor((i * 1000) / PER_SECOND));
    const busy = i % 2 === 0;
    const workspace = busy ? 'busy' : `ws-${i % 2000}`;
    const iso = at.toISOString();
    return {
      deliveryId: newId('whd', at),
      workspace,
      endpointId: busy ? 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0BUS' : `whe_${String(i % 2000).padStart(26, '0')}`,
      status: 'pending',
      attempts: 0,
      evidenceCount: 0,
      nextAttemptAt: iso,
      eventType: 'order.shipped',
      // One event per delivery: its own partition of the event index.
      eventId: `evt-${i}`,
      payload: { i },
      replayedFrom: null,
      lastResponseStatus: null,
      lastError: null,
      createdAt: iso,
      updatedAt: iso,
    };
  });
}

/** Writes per (target, partition key) in the second. */
function writesPerKey(): Map<string, number> {
  const counts = new Map<string, number>();
  const add = (target: string, pk: unknown, n = 1) => {
    if (typeof pk !== 'string') return;
    const key = `${target} ${pk}`;
    counts.set(key, (counts.get(key) ?? 0) + n);
  };
  const deliveries = oneSecond();
  for (const [n, d] of deliveries.entries()) {
    // One in a hundred is a replay or test send: its state is written pending, in the repair index.
    const queuedByApi = n % 100 === 0;
    const summary = summaryItem(d);
    const state = stateItem(d, queuedByApi);
    // The summary: written once at publish; its state (at the first record, and at creation when queued by the API); its attempt.
    add('table', summary.pk, queuedByApi ? 4 : 3);
    // The endpoint's shard of gsi2 and the delivery log: keys (and the event type) that never change after the put.
    add(TABLE.gsi2.name, summary[TABLE.gsi2.partitionKey]);
    add(TABLE.deliveryLog.name, summary[TABLE.deliveryLog.partitionKey]);
    // Repair index: the API's state item is in it until the first record replaces it.
    add(TABLE.gsi3.name, state[TABLE.gsi3.partitionKey], 2);
    // No new delivery item is in gsi1 (it holds only what was written before the layout split).
    add(TABLE.gsi1.name, summary[TABLE.gsi1.partitionKey]);
    add(TABLE.gsi1.name, state[TABLE.gsi1.partitionKey]);
  }
  // Health counters: one write per key per batch of the dispatcher (docs/architecture.md#health-counters).
  const hour = new Date(start).toISOString().slice(0, 13);
  for (let i = 0; i < deliveries.length; i += DISPATCHER_CONSUMER.batchSize) {
    const batch = deliveries.slice(i, i + DISPATCHER_CONSUMER.batchSize);
    for (const pk of new Set(
      batch.flatMap((d) => [keys.endpointHealth(d.endpointId, hour).pk, keys.workspaceHealth(d.workspace, hour).pk]),
    ))
      add('table', pk);
  }
  return counts;
}

const busiest = (counts: Map<string, number>, target: string) =>
  [...counts].filter(([k]) => k.startsWith(`${target} `)).reduce((a, b) => (b[1] > a[1] ? b : a), ['', 0] as [string, number]);

describe('hot keys at 10,000 deliveries a second, one workspace sending half to one endpoint', () => {
  const counts = writesPerKey();

  it.each([['table'], [TABLE.gsi2.name], [TABLE.gsi3.name], [TABLE.deliveryLog.name]])(
    'no partition key of %s takes more than 1,000 writes a second',
    (target) => {
      const [key, writes] = busiest(counts, target);
      expect(writes, key).toBeLessThanOrEqual(PARTITION_WRITES_PER_SECOND);
      expect(writes, key).toBeGreaterThan(0);
    },
  );

  it('writes no new delivery into gsi1 (its whole-item copies would cost the payload again)', () => {
    expect(busiest(counts, TABLE.gsi1.name)).toEqual(['', 0]);
  });

  it('spreads one endpoint taking 5,000 deliveries a second over its 8 shards of gsi2', () => {
    const busy = [...counts].filter(([k]) => k.startsWith(`${TABLE.gsi2.name} EPDLV#whe_01JD2Y8M7K3V9Q4T6W1X5Z0BUS#`));
    expect(busy).toHaveLength(ENDPOINT_DELIVERY_SHARDS);
    for (const [key, writes] of busy) expect(writes, key).toBeGreaterThan(400);
  });
});
