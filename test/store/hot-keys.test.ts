/**
 * Hot partitions (docs/architecture.md#hot-keys): the table's key functions under the traffic of
 * 10,000 deliveries a second, one busy workspace sending half of it to a single endpoint and the
 * other half spread over 2,000 workspaces. Writes are counted per partition key and index for one
 * second of that traffic (the keys carry no time coarser than the hour, so every second of a day
 * looks alike), each delivery delivered first try; DynamoDB takes about 1,000 writes a second per
 * partition key, on the table and on each index.
 */
import { describe, expect, it } from 'vitest';
import type { DeliveryRecord } from '../../lambdas/domain/delivery-lifecycle';
import { newId } from '../../lambdas/domain/ids';
import { DISPATCHER_CONSUMER } from '../../lambdas/queue/delivery-queue';
import { pendingItem } from '../../lambdas/store/deliveries';
import { keys, TABLE } from '../../lambdas/store/table-schema';

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
  for (const d of deliveries) {
    const item = pendingItem(d);
    // The summary: written at publish, updated by the first-try record; its attempt: one put.
    add('table', item.pk, 2);
    add('table', keys.attempt(d.deliveryId, 1).pk);
    // Retention index: keys only, written once (the keys never change).
    add(TABLE.gsi2.name, item[TABLE.gsi2.partitionKey]);
    // Repair index: added at publish, removed by the first record.
    add(TABLE.gsi3.name, item[TABLE.gsi3.partitionKey], 2);
    // Delivery log: its keys and projected attribute never change after the put.
    add(TABLE.deliveryLog.name, item[TABLE.deliveryLog.partitionKey]);
    // Endpoint list index: projects every attribute, so the put and the update both write it.
    add(TABLE.gsi1.name, item[TABLE.gsi1.partitionKey], 2);
  }
  // Health counters: one write per key per batch of the dispatcher (docs/architecture.md#health-counters).
  const hour = new Date(start).toISOString().slice(0, 13);
  for (let i = 0; i < deliveries.length; i += DISPATCHER_CONSUMER.batchSize) {
    const batch = deliveries.slice(i, i + DISPATCHER_CONSUMER.batchSize);
    for (const pk of new Set(batch.flatMap((d) => [keys.endpointHealth(d.endpointId, hour).pk, keys.workspaceHealth(d.workspace, hour).pk]))) add('table', pk);
  }
  return counts;
}

const busiest = (counts: Map<string, number>, target: string) =>
  [...counts].filter(([k]) => k.startsWith(`${target} `)).reduce((a, b) => (b[1] > a[1] ? b : a), ['', 0] as [string, number]);

describe('hot keys at 10,000 deliveries a second, one workspace sending half to one endpoint', () => {
  const counts = writesPerKey();

  it.each([['table'], [TABLE.gsi2.name], [TABLE.gsi3.name], [TABLE.deliveryLog.name]])('no partition key of %s takes more than 1,000 writes a second', (target) => {
    const [key, writes] = busiest(counts, target);
    expect(writes, key).toBeLessThanOrEqual(PARTITION_WRITES_PER_SECOND);
    expect(writes, key).toBeGreaterThan(0);
  });

  // Known, open (issue 9, item 1): the endpoint list index (gsi1) is keyed by endpoint and projects
  // every attribute, so one endpoint taking 5,000 deliveries a second writes its index partition
  // 10,000 times a second. It goes with the summary layout that keeps updates off the indexes.
  it.fails('no partition key of gsi1 takes more than 1,000 writes a second', () => {
    const [key, writes] = busiest(counts, TABLE.gsi1.name);
    expect(writes, key).toBeLessThanOrEqual(PARTITION_WRITES_PER_SECOND);
  });
});
