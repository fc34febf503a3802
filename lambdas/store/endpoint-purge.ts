/**
 * The purge of a deleted endpoint's history (docs/behaviour.md#deleting-an-endpoint): a job item
 * written in the endpoint's delete transaction, run by the job worker in paced, bounded slices
 * that each delete a batch of the endpoint's deliveries (summary, state, attempts; the index
 * entries are on those items), so an endpoint with hundreds of thousands of deliveries never
 * holds up the delete request. Reads hide the deliveries of a deleted endpoint from the moment
 * of the delete (the endpoint item's absence is the tombstone), so the purge only frees storage.
 */
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { TableContext } from './client';
import type { TransactItem } from './audit';
import { endpointDeliveryPartitions, keys, TABLE } from './table-schema';
import { deletePartition, IF_ABSENT, num, oneOf, partitionQuery, str, type Item } from './table-io';

/** The `kind` of a purge job's item (a recovery job's item has none, or `recover`). */
export const PURGE_JOB_KIND = 'purge_endpoint';

/** How long a finished purge job's item is kept (then TTL removes it). */
const FINISHED_TTL_SECONDS = 7 * 24 * 3600;

/** A purge job as stored. */
export interface PurgeJob {
  readonly jobId: string;
  readonly workspace: string;
  readonly endpointId: string;
  readonly status: 'running' | 'completed';
  /** Bumped by every change; each change is conditional on it, so two workers never both run a slice. */
  readonly version: number;
  /** The earliest time the next slice may start (the pacing). */
  readonly nextSliceAt: string;
  /** Deliveries deleted so far. */
  readonly purged: number;
}

/** The item of a new purge job, put (if absent) in the endpoint's delete transaction. */
export function purgeJobPut(table: TableContext, input: { jobId: string; workspace: string; endpointId: string }, now: Date): TransactItem {
  const iso = now.toISOString();
  return {
    Put: {
      TableName: table.tableName,
      Item: {
        ...keys.job(input.jobId),
        type: 'job',
        kind: PURGE_JOB_KIND,
        ...input,
        status: 'running',
        version: 0,
        nextSliceAt: iso,
        purged: 0,
        createdAt: iso,
        updatedAt: iso,
      },
      ConditionExpression: IF_ABSENT,
    },
  };
}

/** A purge job item as a record, each attribute checked. */
export function purgeJobFromItem(item: Item): PurgeJob {
  return {
    jobId: str(item, 'jobId'),
    workspace: str(item, 'workspace'),
    endpointId: str(item, 'endpointId'),
    status: oneOf(item, 'status', ['running', 'completed'] as const),
    version: num(item, 'version', 0),
    nextSliceAt: str(item, 'nextSliceAt'),
    purged: num(item, 'purged', 0),
  };
}

/**
 * Up to `limit` delivery ids of an endpoint still in its indexes: its gsi2 shards, and the
 * endpoint partition of gsi1 that rows written before the shards carry. The indexes are eventually
 * consistent: an id may already be gone (its delete then finds nothing).
 */
export async function deliveriesOfEndpointIndexes(table: TableContext, endpointId: string, limit: number): Promise<string[]> {
  const partitions = [...endpointDeliveryPartitions(endpointId), { index: TABLE.gsi1, pk: keys.deliveriesOfEndpoint(endpointId) } as const];
  const perPartition = Math.max(1, Math.floor(limit / partitions.length));
  const reads = await Promise.all(
    partitions.map(async (p) => {
      const out = await table.doc.send(
        new QueryCommand({ TableName: table.tableName, ...partitionQuery(p.pk, { index: p.index }), Limit: perPartition }),
      );
      return (out.Items ?? []).map((item) => keys.deliveryIdOfPk(str(item, TABLE.partitionKey)));
    }),
  );
  return [...new Set(reads.flat())];
}

/** Deletes deliveries whole (summary, state, attempts), a few at a time. */
export async function deleteDeliveries(table: TableContext, deliveryIds: readonly string[]): Promise<void> {
  for (let i = 0; i < deliveryIds.length; i += 8)
    await Promise.all(deliveryIds.slice(i, i + 8).map((id) => deletePartition(table, keys.delivery(id).pk)));
}

/** Deletes a deleted endpoint's health counters (its per-hour items). */
export async function deleteEndpointHealth(table: TableContext, endpointId: string): Promise<void> {
  await deletePartition(table, keys.endpointHealthPk(endpointId));
}

/**
 * Moves a purge job read at its version: the next slice's time, the count purged and, when done,
 * `completed` with a TTL. Null when another worker moved it since the read.
 */
export async function advancePurgeJob(
  table: TableContext,
  job: PurgeJob,
  change: { nextSliceAt: Date; purged: number; done: boolean },
  now: Date,
): Promise<PurgeJob | null> {
  const next: PurgeJob = {
    ...job,
    version: job.version + 1,
    nextSliceAt: change.nextSliceAt.toISOString(),
    purged: job.purged + change.purged,
    status: change.done ? 'completed' : 'running',
  };
  try {
    await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: keys.job(job.jobId),
        UpdateExpression: `SET version = :next, nextSliceAt = :nsa, purged = :purged, #status = :status, updatedAt = :now${
          change.done ? ', finishedAt = :now, #ttl = :ttl' : ''
        }`,
        ConditionExpression: 'version = :read AND #status = :running',
        ExpressionAttributeNames: { '#status': 'status', ...(change.done ? { '#ttl': TABLE.ttlAttribute } : {}) },
        ExpressionAttributeValues: {
          ':next': next.version,
          ':read': job.version,
          ':nsa': next.nextSliceAt,
          ':purged': next.purged,
          ':status': next.status,
          ':running': 'running',
          ':now': now.toISOString(),
          ...(change.done ? { ':ttl': Math.floor(now.getTime() / 1000) + FINISHED_TTL_SECONDS } : {}),
        },
      }),
    );
    return next;
  } catch (e) {
    if (e instanceof ConditionalCheckFailedException) return null;
    throw e;
  }
}
