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
import { JOB_STATUSES, RECOVERABLE_STATUSES, type Job, type JobStatus } from '../contract/jobs';
import type { DeliveryStatus } from '../contract/schemas';
import type { DeliveryRecord } from '../domain/delivery-lifecycle';
import { recoveryWindowIdRange, type JobRecord } from '../domain/recovery';
import type { TableContext } from './client';
import { auditPut, type AuditInput, type TransactItem } from './audit';
import { fromItem as deliveryFromItem, getDeliveryItems, pendingWithRepair } from './deliveries';
import { endpointDeliveryPartitions, keys, TABLE } from './table-schema';
import { conditionFailedAt, IF_ABSENT, ifAbsentOr, num, oneOf, oneOfList, optStr, partitionQuery, str, type Item } from './table-io';

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
    matched: r.matched,
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
    actor: str(item, 'actor'),
    status: oneOf(item, 'status', JOB_STATUSES),
    since: str(item, 'since'),
    until: str(item, 'until'),
    statuses: oneOfList(item, 'statuses', RECOVERABLE_STATUSES),
    matched: num(item, 'matched', 0),
    replayed: num(item, 'replayed', 0),
    skipped: num(item, 'skipped', 0),
    createdAt: str(item, 'createdAt'),
    updatedAt: str(item, 'updatedAt'),
    finishedAt: optStr(item, 'finishedAt'),
    cursor: optStr(item, 'cursor'),
    version: num(item, 'version', 0),
    nextSliceAt: str(item, 'nextSliceAt'),
  };
}

/** The running job of an endpoint, if any (from its lock). */
export async function runningRecoveryOf(table: TableContext, endpointId: string): Promise<string | null> {
  const out = await table.doc.send(
    new GetCommand({ TableName: table.tableName, Key: keys.recoveryLock(endpointId), ConsistentRead: true }),
  );
  return out.Item ? str(out.Item, 'jobId') : null;
}

/**
 * Stores a new job, takes its endpoint's lock and writes `webhook.recovery_started`,
 * in one transaction. Returns false when another recovery of the endpoint holds the lock.
 */
export async function createRecoveryJob(table: TableContext, job: JobRecord, now: Date): Promise<boolean> {
  try {
    await table.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: table.tableName,
              Item: { ...keys.job(job.jobId), type: 'job', ...job },
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
        ],
      }),
    );
    return true;
  } catch (e) {
    if (conditionFailedAt(e, 1)) return false;
    throw e;
  }
}

/** Reads a job by id (any workspace: callers check ownership). */
export async function getJobRecord(table: TableContext, jobId: string): Promise<JobRecord | null> {
  const out = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: keys.job(jobId), ConsistentRead: true }));
  return out.Item ? jobFromItem(out.Item) : null;
}

/** What selects a recovery's deliveries. */
export interface RecoverySelection {
  readonly endpointId: string;
  readonly since: string;
  readonly until: string;
  readonly statuses: readonly DeliveryStatus[];
  /** The job whose own replays are never matches. */
  readonly jobId?: string;
}

/** True when a delivery (summary with its state) is a match of the selection. */
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
  const matches = ids.flatMap((id) => {
    const item = items.get(id);
    return item && item.endpointId === s.endpointId && selects(s, item) ? [deliveryFromItem(item)] : [];
  });
  return { matches, readTo };
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

/** How many deliveries a recovery would replay now (the dry run). */
export async function countMatches(table: TableContext, s: RecoverySelection): Promise<number> {
  if (emptyWindow(s)) return 0;
  let count = 0;
  let after: string | null = null;
  do {
    const read = await readWindow(table, s, after, SCAN.pageSize);
    count += read.matches.length;
    after = read.readTo;
  } while (after !== null);
  return count;
}

/** Matches past a job's cursor, oldest first. */
export interface MatchBatch {
  readonly items: DeliveryRecord[];
  /** True when nothing lies past the last item returned. */
  readonly exhausted: boolean;
  /** When the read budget ran out before `want` matches: the position scanned to (the cursor after `items`). */
  readonly scannedTo: string | null;
}

/** Up to `want` matches of a job past its cursor, in a bounded number of reads. */
export async function matchesAfter(table: TableContext, job: JobRecord, want: number): Promise<MatchBatch> {
  if (emptyWindow(job)) return { items: [], exhausted: true, scannedTo: null };
  let after: string | null = job.cursor ?? null;
  const items: DeliveryRecord[] = [];
  for (let page = 0; page < SCAN.maxPages; page++) {
    const read = await readWindow(table, job, after, SCAN.pageSize);
    items.push(...read.matches);
    if (items.length > want) return { items: items.slice(0, want), exhausted: false, scannedTo: null };
    if (read.readTo === null) return { items, exhausted: true, scannedTo: null };
    if (items.length === want) return { items, exhausted: false, scannedTo: null };
    after = read.readTo;
  }
  return { items, exhausted: false, scannedTo: after };
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

/** Claims the next slice of a job read at its version: it may start now, the one after not before `nextSliceAt`. Null when another worker moved the job. */
export async function claimSlice(table: TableContext, job: JobRecord, nextSliceAt: Date, now: Date): Promise<JobRecord | null> {
  const ok = await advanceJob(table, job, ['nextSliceAt = :nsa'], { ':nsa': nextSliceAt.toISOString() }, now);
  return ok ? { ...job, version: job.version + 1, nextSliceAt: nextSliceAt.toISOString(), updatedAt: now.toISOString() } : null;
}

/** Moves a job's cursor past entries that were not matches (read budget spent). */
export async function moveCursor(table: TableContext, job: JobRecord, cursor: string, now: Date): Promise<JobRecord | null> {
  const ok = await advanceJob(table, job, ['#cursor = :cursor'], { ':cursor': cursor }, now);
  return ok ? { ...job, cursor, version: job.version + 1, updatedAt: now.toISOString() } : null;
}

/** Outcome of {@link replayForJob}: the job as it now stands, or `lost` when another worker (or a cancel) moved it. */
export type JobReplayOutcome = { kind: 'replayed' | 'skipped' | 'already'; job: JobRecord } | { kind: 'lost' };

/**
 * Replays one source for a job: the replay row (`pendingWithRepair`, tagged with the
 * job), its audit, the marker of (job, source) and the job's progress, in one
 * transaction conditional on the source still matching, the marker being
 * absent and the job's version. A source that no longer matches is skipped; a
 * marker already there (a replay whose progress was somehow not seen) only moves the cursor.
 */
export async function replayForJob(
  table: TableContext,
  job: JobRecord,
  source: DeliveryRecord,
  replay: { record: DeliveryRecord; audit: AuditInput },
  now: Date,
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
    ...pendingWithRepair(table, replay.record, { recoveryJobId: job.jobId }),
    auditPut(table, job.workspace, replay.audit, now),
  ];
  const moved = { ...job, cursor: source.deliveryId, version: job.version + 1, updatedAt: now.toISOString() };
  try {
    await table.doc.send(new TransactWriteCommand({ TransactItems: items }));
    return { kind: 'replayed', job: { ...moved, replayed: job.replayed + 1 } };
  } catch (e) {
    if (conditionFailedAt(e, 2)) return { kind: 'lost' };
    if (conditionFailedAt(e, 0)) {
      const ok = await advanceJob(
        table,
        job,
        ['skipped = skipped + :one', '#cursor = :cursor'],
        { ':one': 1, ':cursor': source.deliveryId },
        now,
      );
      return ok ? { kind: 'skipped', job: { ...moved, skipped: job.skipped + 1 } } : { kind: 'lost' };
    }
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
  actor: string,
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
        ],
      }),
    );
  } catch (e) {
    if (conditionFailedAt(e, 0)) return null;
    throw e;
  }
  return getJobRecord(table, job.jobId);
}
