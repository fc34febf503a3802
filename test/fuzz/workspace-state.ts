/**
 * The workspace's state as the fuzz compares it: every item of the workspace partition
 * (members, tokens, endpoints, audit events, notifications), the admin token's idempotency
 * records and the delivery log's size. A refused request must leave all of it as it was.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { keys, TABLE } from '../../lambdas/store/table-schema';
import type { TestApi } from '../helpers/local-api';

/** The state at one moment. */
export interface Snapshot {
  readonly items: Map<string, string>;
  readonly idempotencyRecords: number;
  readonly deliveries: number;
}

/** Reads and compares a workspace's state. */
export interface WorkspaceState {
  snapshot(): Promise<Snapshot>;
  /** Waits until the pipeline is idle and the workspace stops changing (bounded), and returns that state. */
  settle(): Promise<Snapshot>;
}

/** What changed between two snapshots (at most 10 changes named); null when nothing did. */
export function diff(before: Snapshot, after: Snapshot): string | null {
  const changes: string[] = [];
  for (const [sk, v] of after.items)
    if (!before.items.has(sk)) changes.push(`+${sk}`);
    else if (before.items.get(sk) !== v) changes.push(`~${sk}`);
  for (const sk of before.items.keys()) if (!after.items.has(sk)) changes.push(`-${sk}`);
  if (before.idempotencyRecords !== after.idempotencyRecords)
    changes.push(`idempotency records ${before.idempotencyRecords} → ${after.idempotencyRecords}`);
  if (before.deliveries !== after.deliveries) changes.push(`deliveries ${before.deliveries} → ${after.deliveries}`);
  return changes.length ? changes.slice(0, 10).join(', ') : null;
}

/** The state of `api`'s workspace, with `adminTokenId`'s idempotency records. */
export function workspaceState(api: TestApi, adminTokenId: string): WorkspaceState {
  type QueryInput = Omit<ConstructorParameters<typeof QueryCommand>[0], 'TableName' | 'ExclusiveStartKey'>;
  const queryAll = async (input: QueryInput): Promise<Record<string, unknown>[]> => {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await api.table.doc.send(
        new QueryCommand({ TableName: api.table.tableName, ...input, ...(start ? { ExclusiveStartKey: start } : {}) }),
      );
      items.push(...((out.Items ?? []) as Record<string, unknown>[]));
      start = out.LastEvaluatedKey;
    } while (start);
    return items;
  };
  const countAll = async (input: Omit<QueryInput, 'Select'>): Promise<number> => {
    let count = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const out = await api.table.doc.send(
        new QueryCommand({ TableName: api.table.tableName, ...input, Select: 'COUNT', ...(start ? { ExclusiveStartKey: start } : {}) }),
      );
      count += out.Count ?? 0;
      start = out.LastEvaluatedKey;
    } while (start);
    return count;
  };
  const snapshot = async (): Promise<Snapshot> => {
    const [workspaceItems, idempotencyRecords, ...shards] = await Promise.all([
      queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.workspacePk(api.workspace) } }),
      countAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `IDEM#${adminTokenId}` } }),
      ...Array.from({ length: keys.deliveryLogShards }, (_, shard) =>
        countAll({
          IndexName: TABLE.deliveryLog.name,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': TABLE.deliveryLog.partitionKey },
          ExpressionAttributeValues: { ':pk': keys.deliveryLogPk(api.workspace, shard) },
        }),
      ),
    ]);
    const items = new Map<string, string>();
    for (const item of workspaceItems) items.set(String(item.sk), JSON.stringify(item, Object.keys(item).sort()));
    return { items, idempotencyRecords: idempotencyRecords, deliveries: shards.reduce((a, b) => a + b, 0) };
  };
  return {
    snapshot,
    async settle() {
      const deadline = Date.now() + 15_000;
      let last = await snapshot();
      while (Date.now() < deadline) {
        // Both delivery lanes: a slow lane's delivery still moves its endpoint's streak.
        const { deliveries, slowDeliveries, deadLetters, jobs } = api.queues;
        if (deliveries.depth + slowDeliveries.depth + deadLetters.depth + jobs.depth === 0) {
          // The service's own events reach the publisher through the outbox relay, after the request (docs/architecture.md#outbox).
          await api.outboxCaughtUp(5_000);
          await new Promise((r) => setTimeout(r, 30));
          const next = await snapshot();
          if (!diff(last, next)) return next;
          last = next;
        } else {
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      return snapshot();
    },
  };
}
