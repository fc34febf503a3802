/**
 * The scheduled jobs (docs/behaviour.md#retention-and-scheduled-jobs): history retention, grace-window
 * expiry of replaced secrets, and the stuck-pending repair. Each pass is
 * bounded; a backlog drains over several passes.
 */
import {
  REPAIR_AFTER_MINUTES,
  REPAIR_LOOKBACK_HOURS,
  REPAIR_MAX_PER_PASS,
  RETENTION_DAYS,
  RETENTION_MAX_PER_PASS,
} from '../domain/scheduled-jobs';
import { activeSecrets } from '../domain/secrets';
import type { DeliveryQueue } from '../queue/delivery-queue';
import type { TableContext } from '../store/client';
import { getDeliveryItems, pendingCreatedBefore } from '../store/deliveries';
import { dropExpiredSecrets, endpointsWithEndedGrace, getEndpointRecord, liveEndpointIds } from '../store/endpoints';
import { deleteDeliveries } from '../store/endpoint-purge';
import { workspaceDeliveriesBefore } from '../store/delivery-log';
import { deletePartition } from '../store/table-io';
import { getRetentionWorkspaceCursor, putRetentionWorkspaceCursor, registeredWorkspaces } from '../store/workspace-registry';
import { keys } from '../store/table-schema';

const REPAIR_AFTER_MS = REPAIR_AFTER_MINUTES * 60_000;

const DAY_MS = 24 * 3600 * 1000;

/** Registered workspaces one retention pass looks at, at most (16 log-shard queries each). */
const RETENTION_WORKSPACES_PER_PASS = 200;

/**
 * Deletes at most `max` summaries older than `days`, with their state and attempts
 * (docs/behaviour.md#retention-and-scheduled-jobs). TTL removes the bulk; this pass takes what TTL
 * has not removed yet: the workspaces of the registry in turn, from where the last pass stopped,
 * each workspace's oldest deliveries from its delivery log.
 */
export async function runRetention(
  deps: { table: TableContext; now: () => Date },
  options: { days?: number; max?: number } = {},
): Promise<{ deleted: number }> {
  const max = options.max ?? RETENTION_MAX_PER_PASS;
  const cutoffMs = deps.now().getTime() - (options.days ?? RETENTION_DAYS) * DAY_MS;
  let deleted = 0;
  const drop = async (rows: readonly { deliveryId: string }[]) => {
    // A few deliveries at once (each: its summary, state and attempts): a pass stays short.
    for (let i = 0; i < rows.length; i += 8)
      await Promise.all(rows.slice(i, i + 8).map((row) => deletePartition(deps.table, keys.delivery(row.deliveryId).pk)));
    deleted += rows.length;
  };
  if (deleted < max) {
    let after = await getRetentionWorkspaceCursor(deps.table);
    const workspaces = await registeredWorkspaces(deps.table, after, RETENTION_WORKSPACES_PER_PASS);
    for (const workspace of workspaces) {
      const ids = await workspaceDeliveriesBefore(deps.table, workspace, cutoffMs, max - deleted);
      await drop(ids.map((deliveryId) => ({ deliveryId })));
      // A workspace with more to delete is where the next pass starts.
      if (deleted >= max) break;
      after = workspace;
    }
    // Past the last workspace: the next pass goes round again.
    await putRetentionWorkspaceCursor(deps.table, workspaces.length < RETENTION_WORKSPACES_PER_PASS && deleted < max ? null : after);
  }
  return { deleted };
}

/**
 * Drops replaced secrets whose grace window ended. The grace index holds keys only
 * (docs/architecture.md#secrets): each endpoint is read from the table, and its
 * secrets stay sealed (expiry needs only their dates).
 */
export async function runSecretExpiry(deps: { table: TableContext; now: () => Date }, limit = 500): Promise<{ expired: number }> {
  const now = deps.now();
  let expired = 0;
  for (const ended of await endpointsWithEndedGrace(deps.table, now, limit)) {
    const endpoint = await getEndpointRecord(deps.table, ended.workspace, ended.endpointId);
    const keep = activeSecrets(endpoint?.secrets ?? [], now);
    if (await dropExpiredSecrets(deps.table, ended, endpoint, keep)) expired++;
  }
  return { expired };
}

/**
 * Queues again the pending rows with no evidence that are older than the repair delay (and within
 * the lookback). A row whose endpoint was deleted is never queued again: it is deleted
 * (docs/behaviour.md#deleting-an-endpoint), so it leaves the repair's index for good.
 */
export async function runPendingRepair(
  deps: { table: TableContext; queue: DeliveryQueue; now: () => Date },
  options: { afterMs?: number; lookbackHours?: number; limit?: number } = {},
): Promise<{ requeued: number; purged: number }> {
  const now = deps.now().getTime();
  const before = new Date(now - (options.afterMs ?? REPAIR_AFTER_MS)).toISOString();
  const since = new Date(now - (options.lookbackHours ?? REPAIR_LOOKBACK_HOURS) * 3600_000).toISOString();
  const ids = await pendingCreatedBefore(deps.table, since, before, options.limit ?? REPAIR_MAX_PER_PASS);
  // The index is eventually consistent: only deliveries still pending with no evidence are queued again.
  const items = await getDeliveryItems(deps.table, ids);
  const stuck = ids.flatMap((deliveryId) => {
    const item = items.get(deliveryId);
    return item && item.status === 'pending' && !item.evidenceCount
      ? [{ deliveryId, endpointId: String(item.endpointId), workspace: String(item.workspace) }]
      : [];
  });
  const live = new Set<string>();
  for (const workspace of new Set(stuck.map((row) => row.workspace))) {
    const ids = await liveEndpointIds(
      deps.table,
      workspace,
      stuck.filter((row) => row.workspace === workspace).map((row) => row.endpointId),
    );
    for (const id of ids) live.add(`${workspace}/${id}`);
  }
  const requeue = stuck.filter((row) => live.has(`${row.workspace}/${row.endpointId}`));
  const orphans = stuck.filter((row) => !live.has(`${row.workspace}/${row.endpointId}`)).map((row) => row.deliveryId);
  if (orphans.length > 0) await deleteDeliveries(deps.table, orphans);
  if (requeue.length > 0) await deps.queue.send(requeue);
  return { requeued: requeue.length, purged: orphans.length };
}
