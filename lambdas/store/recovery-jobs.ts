/**
 * Recovery jobs (docs/architecture.md#recovery-jobs): the job item, the
 * endpoint's lock that keeps one recovery running at a time, the scan of the
 * endpoint's matching deliveries, and the replay transaction that writes a
 * replay together with its audit, the job's progress (conditional on the job's
 * version) and a marker per (job, source) put only if absent, so a crash or a
 * redelivered message never replays a source twice in one job.
 */
import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { JOB_STATUSES, RECOVERABLE_STATUSES, RECOVERY_COUNT_CAP, type Job, type JobStatus } from '../contract/jobs';
import type { DeliveryStatus } from '../contract/schemas';
import type { DeliveryRecord } from '../domain/delivery-lifecycle';
import { RECOVERY_SLOT_LEASE_MS, recoveryWindowIdRange, type JobRecord, type RecoveryCount } from '../domain/recovery';
import type { TableContext } from './client';
import { auditActor, auditPut, storedActor, type AuditInput, type TransactItem } from './audit';
import { jobEntryPut } from './job-list';
import { fromItem as deliveryFromItem, getDeliveryItems, pendingWithRepair, replayedAmong, replayLinkWrites } from './deliveries';
import { ENDPOINT_DELIVERY_SHARDS, endpointDeliveryPartitions, keys, TABLE } from './table-schema';
import { PURGE_JOB_KIND, purgeJobFromItem, type PurgeJob } from './endpoint-purge';
import {
  bool,
  conditionFailedAt,
  conflictAt,
  conflicted,
  IF_ABSENT,
  ifAbsentOr,
  num,
  oneOf,
  oneOfList,
  optMap,
  optStr,
  partitionQuery,
  str,
  type Item,
} from './table-io';

/** How long a (job, source) marker is kept: far longer than any job runs. */
const MARKER_TTL_SECONDS = 30 * 24 * 3600;

/** The wire form of a job. */
export function toJobWire(r: JobRecord): Job {
  return {
    jobId: r.jobId,
    kind: r.kind,
    endpointId: r.endpointId,
    status: r.status,
    since: r.since,
    until: r.until,
    statuses: r.statuses,
    includeReplayed: r.includeReplayed,
    matched: r.matched,
    matchedAtLeast: r.matchedAtLeast,
    skippedReplayed: r.skippedReplayed,
    replayed: r.replayed,
    skipped: r.skipped,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    finishedAt: r.finishedAt ?? null,
  };
}

/** A job item as a record, each attribute checked (the progress counts and version read 0 when absent). */
function jobFromItem(item: Item): JobRecord {
  return {
    jobId: str(item, 'jobId'),
    kind: 'recover',
    workspace: str(item, 'workspace'),
    endpointId: str(item, 'endpointId'),
    actor: storedActor(item),
    status: oneOf(item, 'status', JOB_STATUSES),
    since: str(item, 'since'),
    until: str(item, 'until'),
    statuses: oneOfList(item, 'statuses', RECOVERABLE_STATUSES),
    // Jobs stored before these attributes existed selected replays too and counted without a cap.
    includeReplayed: flag(item, 'includeReplayed', true),
    matched: num(item, 'matched', 0),
    matchedAtLeast: flag(item, 'matchedAtLeast', false),
    skippedReplayed: num(item, 'skippedReplayed', 0),
    replayed: num(item, 'replayed', 0),
    skipped: num(item, 'skipped', 0),
    createdAt: str(item, 'createdAt'),
    updatedAt: str(item, 'updatedAt'),
    finishedAt: optStr(item, 'finishedAt'),
    cursor: optStr(item, 'cursor'),
    version: num(item, 'version', 0),
    nextSliceAt: str(item, 'nextSliceAt'),
    slotted: flag(item, 'slotted', false),
  };
}

/** A boolean attribute, `absent` when the item has none. */
function flag(item: Item, name: string, absent: boolean): boolean {
  return item[name] === undefined || item[name] === null ? absent : bool(item, name);
}

/**
 * The item holding a workspace's running-job slots (docs/architecture.md#recovery-jobs): a map of
 * job id to the epoch millisecond its lease ends, and a version every change bumps. It is the
 * recovery lock of the workspace's scope (`WS#` never starts an endpoint id).
 */
const workspaceSlots = (workspace: string) => keys.recoveryLock(`WS#${workspace}`);

/** The job ids of a slots map whose lease has not ended at `nowMs`. */
function activeSlots(item: Item | undefined, nowMs: number): Record<string, number> {
  const slots = item ? (optMap(item, 'slots') ?? {}) : {};
  return Object.fromEntries(Object.entries(slots).filter((e): e is [string, number] => typeof e[1] === 'number' && e[1] > nowMs));
}
/** The running job of an endpoint, if any (from its lock). */
export async function runningRecoveryOf(table: TableContext, endpointId: string): Promise<string | null> {
  const out = await table.doc.send(
    new GetCommand({ TableName: table.tableName, Key: keys.recoveryLock(endpointId), ConsistentRead: true }),
  );
  return out.Item ? str(out.Item, 'jobId') : null;
}

/** Why {@link createRecoveryJob} refused: another recovery of the endpoint runs, or the workspace's slots are all taken. */
export type CreateJobOutcome = 'created' | 'endpoint_busy' | 'workspace_full';

/** Tries a new job takes when concurrent starts in its workspace keep moving the slots item. */
const SLOT_TRIES = 5;

/**
 * Stores a new job, takes its endpoint's lock and one of its workspace's `limit` running-job slots
 * (a slot whose lease ended is free), and writes `webhook.recovery_started`, in one transaction.
 */
export async function createRecoveryJob(table: TableContext, job: JobRecord, now: Date, limit: number): Promise<CreateJobOutcome> {
  for (let tries = 1; ; tries++) {
    const read = await table.doc.send(
      new GetCommand({ TableName: table.tableName, Key: workspaceSlots(job.workspace), ConsistentRead: true }),
    );
    const active = activeSlots(read.Item, now.getTime());
    if (Object.keys(active).length >= limit) return 'workspace_full';
    const version = read.Item ? num(read.Item, 'version', 0) : null;
    const slots = { ...active, [job.jobId]: now.getTime() + RECOVERY_SLOT_LEASE_MS };
    try {
      await table.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            ...jobCreation(table, job, now),
            slotsPut(table, job.workspace, version, slots),
            jobEntryPut(table, job, 'running'),
          ],
        }),
      );
      return 'created';
    } catch (e) {
      if (conditionFailedAt(e, 1)) return 'endpoint_busy';
      // Another start or end in the workspace moved the slots since the read: read them again.
      if ((conditionFailedAt(e, 3) || conflictAt(e, 3)) && tries < SLOT_TRIES) continue;
      throw e;
    }
  }
}

/** The transaction items that store a new job: the job, its endpoint's lock (put if absent), its audit. */
function jobCreation(table: TableContext, job: JobRecord, now: Date): TransactItem[] {
  return [
    {
      Put: {
        TableName: table.tableName,
        Item: { ...keys.job(job.jobId), type: 'job', ...job, actor: auditActor(job.actor) },
        ConditionExpression: IF_ABSENT,
      },
    },
    {
      Put: {
        TableName: table.tableName,
        Item: {
          ...keys.recoveryLock(job.endpointId),
          type: 'recovery-lock',
          jobId: job.jobId,
          workspace: job.workspace,
          createdAt: job.createdAt,
        },
        ConditionExpression: IF_ABSENT,
      },
    },
    auditPut(
      table,
      job.workspace,
      {
        action: 'webhook.recovery_started',
        actor: job.actor,
        targetId: job.endpointId,
        detail: { jobId: job.jobId, since: job.since, until: job.until, statuses: job.statuses, matched: job.matched },
      },
      now,
    ),
  ];
}

/** The slots item holding `slots`, conditional on the version read (null: no item yet). */
function slotsPut(table: TableContext, workspace: string, version: number | null, slots: Record<string, number>): TransactItem {
  return {
    Put: {
      TableName: table.tableName,
      Item: { ...workspaceSlots(workspace), type: 'recovery-slots', workspace, slots, version: (version ?? 0) + 1 },
      ConditionExpression: version === null ? IF_ABSENT : 'version = :read',
      ...(version === null ? {} : { ExpressionAttributeValues: { ':read': version } }),
    },
  };
}

/** The update that renews a running job's slot lease; its condition fails when the slot is no longer the job's. */
function slotRenewal(table: TableContext, job: JobRecord, now: Date): JobUpdate {
  return {
    TableName: table.tableName,
    Key: workspaceSlots(job.workspace),
    UpdateExpression: 'SET slots.#job = :lease, version = version + :one',
    ConditionExpression: 'slots.#job > :now',
    ExpressionAttributeNames: { '#job': job.jobId },
    ExpressionAttributeValues: { ':lease': now.getTime() + RECOVERY_SLOT_LEASE_MS, ':now': now.getTime(), ':one': 1 },
  };
}

/** A job item as the worker reads it: a recovery, or the purge of a deleted endpoint's history. */
export type StoredJob = { readonly kind: 'recover'; readonly job: JobRecord } | { readonly kind: 'purge_endpoint'; readonly job: PurgeJob };

/** Reads a job item by id, of either kind (any workspace: callers check ownership). */
export async function getStoredJob(table: TableContext, jobId: string): Promise<StoredJob | null> {
  const out = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: keys.job(jobId), ConsistentRead: true }));
  if (!out.Item) return null;
  return out.Item.kind === PURGE_JOB_KIND
    ? { kind: 'purge_endpoint', job: purgeJobFromItem(out.Item) }
    : { kind: 'recover', job: jobFromItem(out.Item) };
}

/** Reads a recovery job by id (any workspace: callers check ownership); a purge job is internal and reads as absent. */
export async function getJobRecord(table: TableContext, jobId: string): Promise<JobRecord | null> {
  const stored = await getStoredJob(table, jobId);
  return stored?.kind === 'recover' ? stored.job : null;
}

/** What selects a recovery's deliveries. */
export interface RecoverySelection {
  readonly endpointId: string;
  readonly since: string;
  readonly until: string;
  readonly statuses: readonly DeliveryStatus[];
  /** Also select deliveries that already have a replay (docs/behaviour.md#recovery-jobs). */
  readonly includeReplayed: boolean;
  /** The job whose own replays are never matches. */
  readonly jobId?: string;
}

/**
 * True when a delivery (summary with its state) is in the selection's window and statuses. Whether
 * it already has a replay is its `@REPLAYED` marker's to say, read for these only.
 */
function selects(s: RecoverySelection, item: Record<string, unknown>): boolean {
  const createdAt = Date.parse(String(item.createdAt));
  return (
    s.statuses.some((status) => status === item.status) &&
    createdAt >= Date.parse(s.since) &&
    createdAt <= Date.parse(s.until) &&
    // Defence in depth beside the fixed `until`: a replay written by this job never matches it.
    (s.jobId === undefined || item.recoveryJobId !== s.jobId)
  );
}

/** One read of the window past `after`: the matches, oldest first, up to the position every partition was read to. */
interface WindowRead {
  readonly matches: DeliveryRecord[];
  /** The matches that already have a replay (selected only with `includeReplayed`). */
  readonly replayed: ReadonlySet<string>;
  /** Matches left out because they already have a replay. */
  readonly skippedReplayed: number;
  /** Index entries looked at. */
  readonly examined: number;
  /** The last position read in every partition (matches lie at or below it); null when all are read to the window's end. */
  readonly readTo: string | null;
}

/**
 * Reads up to `pageSize` entries of each partition of the endpoint past `after` in the window,
 * oldest first, keeps those at or below the lowest position where a partition stopped (what lies
 * above it in other partitions is not known yet), and reads their summaries and states: the
 * status is on the state item, so the selection is checked on what the table holds.
 */
async function readWindow(table: TableContext, s: RecoverySelection, after: string | null, pageSize: number): Promise<WindowRead> {
  const range = recoveryWindowIdRange(s.since, s.until);
  const reads = await Promise.all(
    endpointDeliveryPartitions(s.endpointId).map(async (p) => {
      const out = await table.doc.send(
        new QueryCommand({
          TableName: table.tableName,
          ...partitionQuery(p.pk, { index: p.index, sk: { between: [range.from, range.to] } }),
          ScanIndexForward: true,
          Limit: pageSize,
          ...(after !== null && after >= range.from
            ? { ExclusiveStartKey: { ...keys.delivery(after), [p.index.partitionKey]: p.pk, [p.index.sortKey]: after } }
            : {}),
        }),
      );
      const ids = (out.Items ?? []).map((i) => String(i[p.index.sortKey]));
      return { ids, stoppedAt: out.LastEvaluatedKey ? String(out.LastEvaluatedKey[p.index.sortKey]) : null };
    }),
  );
  const stops = reads.flatMap((r) => (r.stoppedAt === null ? [] : [r.stoppedAt]));
  const readTo = stops.length === 0 ? null : stops.reduce((a, b) => (a < b ? a : b));
  const ids = reads
    .flatMap((r) => r.ids)
    .filter((id) => readTo === null || id <= readTo)
    .sort();
  const items = await getDeliveryItems(table, ids);
  const selected = ids.flatMap((id) => {
    const item = items.get(id);
    return item && item.endpointId === s.endpointId && selects(s, item) ? [deliveryFromItem(item)] : [];
  });
  // Markers are read for the window's matches only: most of an endpoint's deliveries were delivered.
  const replayed =
    selected.length === 0
      ? new Set<string>()
      : await replayedAmong(
          table,
          selected.map((d) => d.deliveryId),
        );
  const matches = s.includeReplayed ? selected : selected.filter((d) => !replayed.has(d.deliveryId));
  return { matches, replayed, skippedReplayed: selected.length - matches.length, examined: ids.length, readTo };
}

/**
 * True when the window holds no instant: `until` is capped at the job's creation time, so a
 * `since` in the future leaves nothing to match (and DynamoDB refuses a BETWEEN whose bounds
 * are reversed).
 */
function emptyWindow(s: Pick<RecoverySelection, 'since' | 'until'>): boolean {
  return Date.parse(s.since) > Date.parse(s.until);
}

/** Index entries one read takes per partition, and reads one slice makes at most. */
const SCAN = { pageSize: 100, maxPages: 10 } as const;

/** Index entries one read of a count takes per partition: a few reads reach the cap. */
const COUNT_PAGE_SIZE = Math.ceil(RECOVERY_COUNT_CAP / ENDPOINT_DELIVERY_SHARDS / 2);

/**
 * How many deliveries a recovery would replay now (the dry run), in bounded work: exact among the
 * first {@link RECOVERY_COUNT_CAP} deliveries of the window (about that many index entries,
 * summaries and states read, whatever the backlog); past them the counts are lower bounds.
 */
export async function countMatches(table: TableContext, s: RecoverySelection): Promise<RecoveryCount> {
  const count = { matched: 0, matchedAtLeast: false, skippedReplayed: 0 };
  if (emptyWindow(s)) return count;
  let examined = 0;
  let after: string | null = null;
  do {
    const read = await readWindow(table, s, after, COUNT_PAGE_SIZE);
    count.matched += read.matches.length;
    count.skippedReplayed += read.skippedReplayed;
    examined += read.examined;
    after = read.readTo;
  } while (after !== null && examined < RECOVERY_COUNT_CAP);
  return { ...count, matchedAtLeast: after !== null };
}

/** Matches past a job's cursor, oldest first. */
export interface MatchBatch {
  readonly items: DeliveryRecord[];
  /** The items that already have a replay (there only with `includeReplayed`): their replay is not the first. */
  readonly replayed: ReadonlySet<string>;
  /** True when nothing lies past the last item returned. */
  readonly exhausted: boolean;
  /** When the read budget ran out before `want` matches: the position scanned to (the cursor after `items`). */
  readonly scannedTo: string | null;
}

/** Up to `want` matches of a job past its cursor, in a bounded number of reads. */
export async function matchesAfter(table: TableContext, job: JobRecord, want: number): Promise<MatchBatch> {
  if (emptyWindow(job)) return { items: [], replayed: new Set(), exhausted: true, scannedTo: null };
  let after: string | null = job.cursor ?? null;
  const items: DeliveryRecord[] = [];
  const replayed = new Set<string>();
  for (let page = 0; page < SCAN.maxPages; page++) {
    const read = await readWindow(table, job, after, SCAN.pageSize);
    items.push(...read.matches);
    read.replayed.forEach((id) => replayed.add(id));
    if (items.length > want) return { items: items.slice(0, want), replayed, exhausted: false, scannedTo: null };
    if (read.readTo === null) return { items, replayed, exhausted: true, scannedTo: null };
    if (items.length === want) return { items, replayed, exhausted: false, scannedTo: null };
    after = read.readTo;
  }
  return { items, replayed, exhausted: false, scannedTo: after };
}

/** A conditional update of one item, as a transaction and an UpdateCommand both take it. */
type JobUpdate = NonNullable<TransactItem['Update']>;

/** The condition and update that advance a job read at `job.version`. */
function advance(table: TableContext, job: JobRecord, sets: string[], values: Record<string, unknown>, now: Date): JobUpdate {
  return {
    TableName: table.tableName,
    Key: keys.job(job.jobId),
    UpdateExpression: `SET ${['version = :next', 'updatedAt = :now', ...sets].join(', ')}`,
    ConditionExpression: 'version = :read AND #status = :running',
    // `cursor` is a DynamoDB reserved word.
    ExpressionAttributeNames: { '#status': 'status', ...(sets.some((s) => s.includes('#cursor')) ? { '#cursor': 'cursor' } : {}) },
    ExpressionAttributeValues: {
      ':read': job.version,
      ':next': job.version + 1,
      ':now': now.toISOString(),
      ':running': 'running',
      ...values,
    },
  };
}

async function advanceJob(
  table: TableContext,
  job: JobRecord,
  sets: string[],
  values: Record<string, unknown>,
  now: Date,
): Promise<boolean> {
  try {
    await table.doc.send(new UpdateCommand(advance(table, job, sets, values, now)));
    return true;
  } catch (e) {
    if (e instanceof ConditionalCheckFailedException) return false;
    throw e;
  }
}

/**
 * Claims the next slice of a job read at its version: it may start now, the one after not before
 * `nextSliceAt`; in the same transaction the job's workspace slot lease is renewed. Null when
 * another worker moved the job; `slot_lost` when its slot's lease ended while the job did not run
 * (another start may hold the slot now), so the job must stop.
 */
export async function claimSlice(
  table: TableContext,
  job: JobRecord,
  nextSliceAt: Date,
  now: Date,
): Promise<JobRecord | null | 'slot_lost'> {
  const claim = advance(table, job, ['nextSliceAt = :nsa'], { ':nsa': nextSliceAt.toISOString() }, now);
  try {
    if (job.slotted)
      await table.doc.send(new TransactWriteCommand({ TransactItems: [{ Update: claim }, { Update: slotRenewal(table, job, now) }] }));
    else await table.doc.send(new UpdateCommand(claim));
  } catch (e) {
    if (e instanceof ConditionalCheckFailedException || conditionFailedAt(e, 0)) return null;
    if (conditionFailedAt(e, 1)) return 'slot_lost';
    throw e;
  }
  return { ...job, version: job.version + 1, nextSliceAt: nextSliceAt.toISOString(), updatedAt: now.toISOString() };
}

/** Moves a job's cursor past entries that were not matches (read budget spent). */
export async function moveCursor(table: TableContext, job: JobRecord, cursor: string, now: Date): Promise<JobRecord | null> {
  const ok = await advanceJob(table, job, ['#cursor = :cursor'], { ':cursor': cursor }, now);
  return ok ? { ...job, cursor, version: job.version + 1, updatedAt: now.toISOString() } : null;
}

/**
 * Outcome of {@link replayForJob}: the job as it now stands, `lost` when another worker (or a
 * cancel) moved it, or `endpoint_gone` when its endpoint was deleted or disabled (nothing written).
 */
export type JobReplayOutcome = { kind: 'replayed' | 'skipped' | 'already'; job: JobRecord } | { kind: 'lost' } | { kind: 'endpoint_gone' };

/** Tries a job's replay takes when concurrent replays of the same source or counter keep refusing its transaction. */
const REPLAY_TRIES = 5;

/**
 * Replays one source for a job: the replay row (`pendingWithRepair`, tagged with the
 * job), its audit, the marker of (job, source), the job's progress and the replay's link under
 * its source (with the source's `@REPLAYED` marker when it is the first replay), in one
 * transaction conditional on the source still matching, the (job, source) marker being
 * absent and the job's version. A source that no longer matches is skipped, and so is one that
 * got a replay meanwhile when the job leaves replayed sources out; a (job, source) marker already
 * there (a replay whose progress was somehow not seen) only moves the cursor. `sourceReplayed`:
 * the source had a replay when the job read it.
 */
export async function replayForJob(
  table: TableContext,
  job: JobRecord,
  source: DeliveryRecord,
  replay: { record: DeliveryRecord; audit: AuditInput },
  now: Date,
  sourceReplayed: boolean,
): Promise<JobReplayOutcome> {
  const statusValues = Object.fromEntries(job.statuses.map((s, i) => [`:s${i}`, s]));
  const items: TransactItem[] = [
    {
      // On the source's state; with no state item, on the summary's own state, which never changes.
      ConditionCheck: {
        TableName: table.tableName,
        Key: keys.deliveryState(source.deliveryId),
        ConditionExpression: ifAbsentOr(`#status IN (${job.statuses.map((_, i) => `:s${i}`).join(', ')})`),
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: statusValues,
      },
    },
    {
      Put: {
        TableName: table.tableName,
        Item: {
          ...keys.recoveryMarker(job.jobId, source.deliveryId),
          type: 'recovery-marker',
          replayId: replay.record.deliveryId,
          [TABLE.ttlAttribute]: Math.floor(now.getTime() / 1000) + MARKER_TTL_SECONDS,
        },
        ConditionExpression: IF_ABSENT,
      },
    },
    { Update: advance(table, job, ['replayed = replayed + :one', '#cursor = :cursor'], { ':one': 1, ':cursor': source.deliveryId }, now) },
    {
      // A delete or disable of the endpoint that commits first stops the job's replays from the next one on.
      ConditionCheck: {
        TableName: table.tableName,
        Key: keys.endpoint(job.workspace, job.endpointId),
        ConditionExpression: 'enabled = :enabled',
        ExpressionAttributeValues: { ':enabled': true },
      },
    },
    ...pendingWithRepair(table, replay.record, { recoveryJobId: job.jobId }),
    auditPut(table, job.workspace, replay.audit, now),
  ];
  // The link writes come last: with a first replay, the source's marker is at `linkAt`.
  const linkAt = items.length;
  const moved = { ...job, cursor: source.deliveryId, version: job.version + 1, updatedAt: now.toISOString() };
  const skip = async (): Promise<JobReplayOutcome> => {
    const ok = await advanceJob(
      table,
      job,
      ['skipped = skipped + :one', '#cursor = :cursor'],
      { ':one': 1, ':cursor': source.deliveryId },
      now,
    );
    return ok ? { kind: 'skipped', job: { ...moved, skipped: job.skipped + 1 } } : { kind: 'lost' };
  };
  let first = !sourceReplayed;
  for (let tries = 1; ; tries++) {
    try {
      await table.doc.send(
        new TransactWriteCommand({ TransactItems: [...items, ...replayLinkWrites(table, source, replay.record, now, first)] }),
      );
      return { kind: 'replayed', job: { ...moved, replayed: job.replayed + 1 } };
    } catch (e) {
      if (first && conditionFailedAt(e, linkAt)) {
        // The source got a replay since the job read it: no longer a match, unless the job takes replayed sources.
        if (!job.includeReplayed) return skip();
        first = false;
        continue;
      }
      if (tries < REPLAY_TRIES && conflicted(e)) continue;
      return replayRefused(e);
    }
  }

  async function replayRefused(e: unknown): Promise<JobReplayOutcome> {
    if (conditionFailedAt(e, 2)) return { kind: 'lost' };
    if (conditionFailedAt(e, 3)) return { kind: 'endpoint_gone' };
    if (conditionFailedAt(e, 0)) return skip();
    if (conditionFailedAt(e, 1)) {
      const ok = await advanceJob(table, job, ['#cursor = :cursor'], { ':cursor': source.deliveryId }, now);
      return ok ? { kind: 'already', job: moved } : { kind: 'lost' };
    }
    throw e;
  }
}

/**
 * Ends a job: its final status, the release of its endpoint's lock and
 * `webhook.recovery_finished`, in one transaction. `expectedVersion` makes the
 * worker's end conditional on its own read; a cancel only needs the job running.
 * Returns the ended job, or null when it was no longer running (or moved).
 */
export async function finishJob(
  table: TableContext,
  job: JobRecord,
  status: Exclude<JobStatus, 'running'>,
  actor: AuditInput['actor'],
  now: Date,
  options: { expectedVersion?: number; reason?: string } = {},
): Promise<JobRecord | null> {
  const iso = now.toISOString();
  const values: Record<string, unknown> = { ':status': status, ':now': iso, ':running': 'running', ':one': 1 };
  let condition = '#status = :running';
  if (options.expectedVersion !== undefined) {
    condition += ' AND version = :read';
    values[':read'] = options.expectedVersion;
  }
  try {
    await table.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: table.tableName,
              Key: keys.job(job.jobId),
              UpdateExpression: 'SET #status = :status, finishedAt = :now, updatedAt = :now, version = version + :one',
              ConditionExpression: condition,
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: values,
            },
          },
          {
            Delete: {
              TableName: table.tableName,
              Key: keys.recoveryLock(job.endpointId),
              // Only this job's lock: a lock already gone is fine, another job's is left alone.
              ConditionExpression: ifAbsentOr('jobId = :job'),
              ExpressionAttributeValues: { ':job': job.jobId },
            },
          },
          ...(job.slotted
            ? [
                {
                  // Frees the job's slot; the version moves, so a start that read the slots before re-reads them.
                  Update: {
                    TableName: table.tableName,
                    Key: workspaceSlots(job.workspace),
                    UpdateExpression: 'SET version = if_not_exists(version, :zero) + :one REMOVE slots.#job',
                    ExpressionAttributeNames: { '#job': job.jobId },
                    ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
                  },
                },
              ]
            : []),
          auditPut(
            table,
            job.workspace,
            {
              action: 'webhook.recovery_finished',
              actor,
              targetId: job.endpointId,
              detail: { jobId: job.jobId, status, ...(options.reason ? { reason: options.reason } : {}) },
            },
            now,
          ),
          jobEntryPut(table, job, status),
        ],
      }),
    );
  } catch (e) {
    if (conditionFailedAt(e, 0)) return null;
    throw e;
  }
  return getJobRecord(table, job.jobId);
}
