/**
 * Erasing a workspace (docs/behaviour.md#erasing-a-workspace): the job item and the platform's
 * audit entries, in the platform partition (outside every workspace, so they outlive it); the
 * start transaction that marks the workspace item `erasingJobId`; and the bounded steps the job
 * worker runs, phase by phase, over every place a workspace's items live
 * (docs/architecture.md#what-a-workspace-holds-and-where).
 *
 * Every step deletes only items it has just read strongly consistent from the table (an index
 * read only names candidates), in transactions that add what they delete to the job's counts, on
 * the condition that the job is still at the version its slice claimed and that each item is still
 * there: an item is counted exactly when it is deleted, whichever of two slices of the job (a
 * duplicated message, a slice given up at its deadline) or a retry after a lost answer does it.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ERASED_KINDS, type ErasedKind } from '../contract/erasure';
import type { ErasureJob } from '../contract/erasure-schemas';
import { RATE_LIMIT_BUCKETS, WORKSPACE_QUOTA_NOUNS } from '../contract/rate-limits';
import { newId } from '../domain/ids';
import { MAX_TRANSACTION_ITEMS } from '../domain/subscription-plan';
import type { TableContext } from './client';
import { deliveriesOfEndpointIndexes } from './endpoint-purge';
import {
  batchWriteAll,
  conditionFailedAt,
  conflicted,
  IF_ABSENT,
  num,
  oneOf,
  optMap,
  optStr,
  partitionQuery,
  str,
  withExpressions,
  type Item,
  type SortKeyCondition,
} from './table-io';
import { keys, SK_PREFIX, TABLE } from './table-schema';

/**
 * The phases of an erasure, in order. Credentials go first (access ends), then what makes new
 * items (subscriptions: the publisher's fan-out; jobs: recoveries), then the deliveries, the
 * endpoints and tokens with what they own outside the workspace's partition, every other item of
 * the partition, the partitions keyed by the slug, and last the workspace item itself.
 */
export const ERASURE_PHASES = [
  'credentials',
  'subscriptions',
  'jobs',
  'deliveries',
  'endpoints',
  'tokens',
  'workspace',
  'outside',
  'finish',
] as const;

/** A phase of an erasure. */
export type ErasurePhase = (typeof ERASURE_PHASES)[number];

/** The statuses of an erasure job. */
const STATUSES = ['running', 'completed', 'failed'] as const;

/** An erasure job as stored. */
export interface ErasureRecord {
  readonly jobId: string;
  readonly workspace: string;
  /** Who asked (the IAM principal ARN of the platform call). */
  readonly requestedBy: string;
  readonly status: (typeof STATUSES)[number];
  readonly phase: ErasurePhase;
  /** Where the current phase's pass stopped, when it pages (JSON of the last key read); null: from the start. */
  readonly cursor: string | null;
  readonly erased: Readonly<Record<string, number>>;
  /** Bumped by every slice's claim; each change is conditional on it, so two workers never both run a slice. */
  readonly version: number;
  /** The earliest time the next slice may start (the pacing). */
  readonly nextSliceAt: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly finishedAt: string | null;
  readonly failureReason: string | null;
}

/**
 * Sort-key prefixes, in a workspace's partition, of the items that hold a credential (the hash of
 * a Bearer token, whose hash item resolves it; a portal link's code): read at the erasure's start
 * so access ends before the start answers. The worker's first phase then looks for any item
 * carrying one of {@link CREDENTIAL_ATTRIBUTES}, whatever its prefix. A kind of credential added
 * later adds its prefix here. `PORTAL#` is the portal sessions' (lambdas/store/portal-sessions.ts).
 */
const CREDENTIAL_SK_PREFIXES: readonly string[] = [SK_PREFIX.token, SK_PREFIX.portalSession];

/**
 * The attributes by which an item of a workspace's partition names a credential's item outside
 * it, and that item's key: an API token's `hash` and an opened portal session's `tokenHash` (their
 * `TOKENHASH#` items, which the authorizer resolves), and a portal link's `codeHash` (its
 * `PORTALCODE#` item, lambdas/store/portal-sessions.ts, until the link is opened or expires).
 */
const CREDENTIAL_ATTRIBUTES: Readonly<Record<string, (hash: string) => { pk: string; sk: string }>> = {
  hash: keys.tokenHash,
  tokenHash: keys.tokenHash,
  codeHash: keys.portalCode,
};

/** The kind an item is counted as, by its `type` (docs/behaviour.md#erasing-a-workspace). */
const KIND_OF_TYPE: Readonly<Record<string, ErasedKind>> = {
  endpoint: 'endpoints',
  subscription: 'subscriptions',
  audit: 'audit',
  notification: 'notifications',
  token: 'tokens',
  member: 'members',
  job: 'jobs',
  idempotency: 'idempotency',
  delivery: 'deliveries',
  attempt: 'attempts',
  'endpoint-health': 'health',
  'workspace-health': 'health',
  'workspace-replayed': 'health',
  'workspace-counts': 'counters',
};

/** Counts by kind. */
type Counts = Partial<Record<ErasedKind, number>>;

/** The kind an item read by a step is counted as: by its type; a session of any kind as `sessions`; a rate-limit window (no type) as `counters`. */
function kindOf(item: Item): ErasedKind {
  const type = item.type;
  if (typeof type !== 'string') return String(item[TABLE.partitionKey]).startsWith('RL#') ? 'counters' : 'other';
  // A credential's hash item supports its token or session, which is counted itself.
  if (type.endsWith('hash')) return 'other';
  return KIND_OF_TYPE[type] ?? (type.includes('session') ? 'sessions' : 'other');
}

/** What deleting `items` erases, by kind (an endpoint's sealed secrets as `secrets`). */
function countsOf(items: readonly Item[]): Counts {
  const counts: Counts = {};
  const add = (kind: ErasedKind, n: number) => void (counts[kind] = (counts[kind] ?? 0) + n);
  for (const item of items) {
    const kind = kindOf(item);
    add(kind, 1);
    if (kind === 'endpoints' && Array.isArray(item.secrets)) add('secrets', item.secrets.length);
  }
  return counts;
}

const nowIso = (now: Date) => now.toISOString();

const zeroCounts = (): Record<string, number> => Object.fromEntries(ERASED_KINDS.map((k) => [k, 0]));

// ---- the job item

/** An erasure job item as a record, each attribute checked. */
function erasureFromItem(item: Item): ErasureRecord {
  const erased = optMap(item, 'erased') ?? {};
  return {
    jobId: str(item, 'jobId'),
    workspace: str(item, 'workspace'),
    requestedBy: str(item, 'requestedBy'),
    status: oneOf(item, 'status', STATUSES),
    phase: oneOf(item, 'phase', ERASURE_PHASES),
    cursor: optStr(item, 'cursor'),
    erased: Object.fromEntries(Object.entries(erased).filter((e): e is [string, number] => typeof e[1] === 'number')),
    version: num(item, 'version', 0),
    nextSliceAt: str(item, 'nextSliceAt'),
    createdAt: str(item, 'createdAt'),
    updatedAt: str(item, 'updatedAt'),
    finishedAt: optStr(item, 'finishedAt'),
    failureReason: optStr(item, 'failureReason'),
  };
}

/** The wire form of an erasure job. */
export function toErasureWire(r: ErasureRecord): ErasureJob {
  return {
    jobId: r.jobId,
    kind: 'erase',
    workspace: r.workspace,
    status: r.status,
    erased: { ...zeroCounts(), ...r.erased },
    ...(r.status === 'failed' && r.failureReason ? { failureReason: r.failureReason } : {}),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    finishedAt: r.finishedAt,
  };
}

/** Reads an erasure job by id; null when there is none (a recovery job's id among them). */
export async function getErasureRecord(table: TableContext, jobId: string): Promise<ErasureRecord | null> {
  const out = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: keys.erasureJob(jobId), ConsistentRead: true }));
  return out.Item ? erasureFromItem(out.Item) : null;
}

/** The transaction item of an entry of the platform's audit log about an erasure. */
function platformAuditPut(table: TableContext, job: Pick<ErasureRecord, 'jobId' | 'workspace'>, entry: PlatformAuditEntry, now: Date) {
  const auditEventId = newId('aud', now);
  return {
    Put: {
      TableName: table.tableName,
      Item: {
        ...keys.platformAudit(auditEventId),
        type: 'platform-audit',
        auditEventId,
        action: entry.action,
        requestedBy: entry.requestedBy,
        workspace: job.workspace,
        jobId: job.jobId,
        detail: entry.detail ?? {},
        createdAt: now.toISOString(),
      },
    },
  };
}

/** What the platform's audit log says of an erasure. */
interface PlatformAuditEntry {
  readonly action: 'workspace.erasure_started' | 'workspace.erasure_resumed' | 'workspace.erased' | 'workspace.erasure_failed';
  /** The IAM principal that asked, or `system` for the worker's own decisions. */
  readonly requestedBy: string;
  readonly detail?: Record<string, unknown>;
}

// ---- the start

/** What starting an erasure found. */
export type ErasureStart =
  | { readonly kind: 'started' | 'resumed'; readonly job: ErasureRecord }
  /** An erasure of the workspace is already running: that job. */
  | { readonly kind: 'running'; readonly job: ErasureRecord }
  | { readonly kind: 'no_workspace' };

/**
 * Starts the erasure of `slug` in one transaction: the job item, `erasingJobId` on the workspace
 * item (on the condition it exists and carries none), and the platform audit entry. A workspace
 * already being erased answers that job; a failed one is resumed (running again, from where it
 * stopped).
 */
export async function startErasure(
  table: TableContext,
  input: { readonly slug: string; readonly jobId: string; readonly requestedBy: string },
  now: Date,
): Promise<ErasureStart> {
  // Each retry means the workspace item changed between the read and the transaction (another start won).
  for (let tries = 0; tries < 3; tries++) {
    const out = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: keys.workspace(input.slug), ConsistentRead: true }));
    if (!out.Item) return { kind: 'no_workspace' };
    const current = optStr(out.Item, 'erasingJobId');
    if (current) {
      const job = await getErasureRecord(table, current);
      if (!job) throw new Error(`Workspace ${input.slug} is marked erased by job ${current}, which does not exist`);
      if (job.status !== 'failed') return { kind: 'running', job };
      const resumed = await resumeErasure(table, job, input.requestedBy, now);
      if (resumed) return { kind: 'resumed', job: resumed };
      continue;
    }
    const iso = now.toISOString();
    const job: ErasureRecord = {
      jobId: input.jobId,
      workspace: input.slug,
      requestedBy: input.requestedBy,
      status: 'running',
      phase: ERASURE_PHASES[0],
      cursor: null,
      erased: zeroCounts(),
      version: 0,
      nextSliceAt: iso,
      createdAt: iso,
      updatedAt: iso,
      finishedAt: null,
      failureReason: null,
    };
    try {
      await table.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: table.tableName,
                Item: { ...keys.erasureJob(job.jobId), type: 'erasure-job', kind: 'erase', ...job },
                ConditionExpression: IF_ABSENT,
              },
            },
            {
              Update: {
                TableName: table.tableName,
                Key: keys.workspace(input.slug),
                UpdateExpression: 'SET erasingJobId = :jobId',
                ConditionExpression: `attribute_exists(${TABLE.partitionKey}) AND attribute_not_exists(erasingJobId)`,
                ExpressionAttributeValues: { ':jobId': job.jobId },
              },
            },
            platformAuditPut(table, job, { action: 'workspace.erasure_started', requestedBy: input.requestedBy }, now),
          ],
        }),
      );
      return { kind: 'started', job };
    } catch (e) {
      if (!conditionFailedAt(e, 1)) throw e;
    }
  }
  throw new Error(`The erasure of workspace ${input.slug} could not be started after 3 tries`);
}

/** A failed erasure running again from where it stopped; null when it was no longer failed. */
async function resumeErasure(table: TableContext, job: ErasureRecord, requestedBy: string, now: Date): Promise<ErasureRecord | null> {
  const iso = now.toISOString();
  const next: ErasureRecord = {
    ...job,
    status: 'running',
    version: job.version + 1,
    nextSliceAt: iso,
    updatedAt: iso,
    finishedAt: null,
    failureReason: null,
  };
  try {
    await table.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: table.tableName,
              Key: keys.erasureJob(job.jobId),
              UpdateExpression:
                'SET #status = :running, version = :next, nextSliceAt = :now, updatedAt = :now REMOVE finishedAt, failureReason',
              ConditionExpression: '#status = :failed AND version = :read',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: {
                ':running': 'running',
                ':failed': 'failed',
                ':next': next.version,
                ':read': job.version,
                ':now': iso,
              },
            },
          },
          platformAuditPut(table, job, { action: 'workspace.erasure_resumed', requestedBy }, now),
        ],
      }),
    );
    return next;
  } catch (e) {
    if (conditionFailedAt(e, 0)) return null;
    throw e;
  }
}

/**
 * Ends access to a workspace at once: deletes the hash item of every credential its partition
 * holds under {@link CREDENTIAL_SK_PREFIXES}, so no token or session of it resolves any more (the
 * authorizer and the re-check of a change both look the hash up). Not counted: the worker's first
 * phase counts the hash items it still finds.
 */
export async function endWorkspaceAccess(table: TableContext, slug: string): Promise<void> {
  for (const prefix of CREDENTIAL_SK_PREFIXES) {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await readItems(table, keys.workspacePk(slug), { sk: { prefix }, limit: 500, start });
      await batchWriteAll(
        table,
        hashKeysOf(page.items).map((Key) => ({ DeleteRequest: { Key } })),
      );
      start = page.last;
    } while (start);
  }
}

/** The items of the credentials `items` name (by {@link CREDENTIAL_ATTRIBUTES}). */
function hashKeysOf(items: readonly Item[]): { pk: string; sk: string }[] {
  return items.flatMap((item) =>
    Object.entries(CREDENTIAL_ATTRIBUTES).flatMap(([name, key]) => {
      const value = item[name];
      return typeof value === 'string' ? [key(value)] : [];
    }),
  );
}

// ---- reads and deletes

/** Attributes a step reads of an item: its keys, its type, an endpoint's secrets (to count them), the credentials it names. */
const PROJECTION = {
  expression: `#ek, #es, #et, #esec, ${Object.keys(CREDENTIAL_ATTRIBUTES)
    .map((_, i) => `#ec${i}`)
    .join(', ')}`,
  names: {
    '#ek': TABLE.partitionKey,
    '#es': TABLE.sortKey,
    '#et': 'type',
    '#esec': 'secrets',
    ...Object.fromEntries(Object.keys(CREDENTIAL_ATTRIBUTES).map((name, i) => [`#ec${i}`, name])),
  },
};

/** The filter of the items that name a credential. */
const NAMES_A_CREDENTIAL = Object.keys(CREDENTIAL_ATTRIBUTES)
  .map((_, i) => `attribute_exists(#ec${i})`)
  .join(' OR ');

/** One page of a partition of the table, strongly consistent: at most `limit` items, and where it stopped. */
async function readItems(
  table: TableContext,
  pk: string,
  options: { sk?: SortKeyCondition; limit: number; start?: Record<string, unknown> | undefined; filter?: string },
): Promise<{ items: Item[]; last: Record<string, unknown> | undefined }> {
  const out = await table.doc.send(
    new QueryCommand({
      TableName: table.tableName,
      ...withExpressions(partitionQuery(pk, options.sk ? { sk: options.sk } : {}), { names: PROJECTION.names }),
      ProjectionExpression: PROJECTION.expression,
      ...(options.filter ? { FilterExpression: options.filter } : {}),
      ConsistentRead: true,
      Limit: options.limit,
      ...(options.start ? { ExclusiveStartKey: options.start } : {}),
    }),
  );
  return { items: out.Items ?? [], last: out.LastEvaluatedKey };
}

/** Every item of a partition, up to `limit` (strongly consistent), and whether that was all of it. */
async function readPartition(table: TableContext, pk: string, limit: number): Promise<{ items: Item[]; complete: boolean }> {
  const items: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await readItems(table, pk, { limit: limit - items.length, start });
    items.push(...page.items);
    start = page.last;
  } while (start && items.length < limit);
  return { items, complete: !start };
}

/** The items at `keyList` that exist (strongly consistent), with the attributes a step reads. */
async function existing(table: TableContext, keyList: readonly { pk: string; sk: string }[]): Promise<Item[]> {
  const found: Item[] = [];
  for (let i = 0; i < keyList.length; i += 100) {
    let pending: Record<string, unknown>[] = keyList.slice(i, i + 100);
    for (let tries = 0; pending.length > 0; tries++) {
      if (tries >= 10) throw new Error(`DynamoDB left ${pending.length} reads unprocessed after 10 tries`);
      const out = await table.doc.send(
        new BatchGetCommand({
          RequestItems: {
            [table.tableName]: {
              Keys: pending,
              ConsistentRead: true,
              ProjectionExpression: PROJECTION.expression,
              ExpressionAttributeNames: PROJECTION.names,
            },
          },
        }),
      );
      found.push(...(out.Responses?.[table.tableName] ?? []));
      pending = out.UnprocessedKeys?.[table.tableName]?.Keys ?? [];
    }
  }
  return found;
}

/** A claimed slice of an erasure: the job at the version the slice claimed, and the clock its counts are stamped with. */
interface Slice {
  readonly job: Pick<ErasureRecord, 'jobId' | 'version'>;
  readonly now: () => Date;
}

/** The job moved on under a slice (a duplicate message's worker claimed it, or it failed): the slice stops. */
export class ErasureMoved extends Error {
  override readonly name = 'ErasureMoved';
}

/** Items one transaction deletes at most: the transaction's limit less the job's update that counts them. */
const DELETES_PER_TRANSACTION = MAX_TRANSACTION_ITEMS - 1;

/** Times a batch's transaction is tried again when another writer keeps changing one of its items. */
const CONFLICT_TRIES = 5;

/** Deletes `items` (read just before) in transactions that each count what they delete; returns how many were deleted. */
async function deleteRead(table: TableContext, slice: Slice, items: readonly Item[]): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < items.length; i += DELETES_PER_TRANSACTION)
    deleted += await deleteCounted(table, slice, items.slice(i, i + DELETES_PER_TRANSACTION));
  return deleted;
}

/**
 * Deletes a batch and adds it to the job's counts in one transaction, on the condition that the job
 * is still at the slice's version and each item is still there, so no item is counted that this
 * transaction did not delete, and none deleted goes uncounted. An item already gone (another slice
 * of the job deleted it before this one lost its claim, or its TTL ran out) is left out and the rest
 * tried again. Throws {@link ErasureMoved} when the job is no longer the slice's.
 */
async function deleteCounted(table: TableContext, slice: Slice, batch: readonly Item[]): Promise<number> {
  let pending = batch;
  for (let conflicts = 0; pending.length > 0;) {
    try {
      await table.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            { Update: countUpdate(table, slice, countsOf(pending)) },
            ...pending.map((item) => ({
              Delete: {
                TableName: table.tableName,
                Key: { [TABLE.partitionKey]: item[TABLE.partitionKey], [TABLE.sortKey]: item[TABLE.sortKey] },
                ConditionExpression: 'attribute_exists(#pk)',
                ExpressionAttributeNames: { '#pk': TABLE.partitionKey },
              },
            })),
          ],
        }),
      );
      return pending.length;
    } catch (e) {
      if (conditionFailedAt(e, 0)) throw new ErasureMoved(`Erasure job ${slice.job.jobId} moved on under its slice`);
      const there = pending.filter((_, i) => !conditionFailedAt(e, i + 1));
      if (there.length < pending.length) pending = there;
      else if (conflicted(e) && ++conflicts < CONFLICT_TRIES) continue;
      else throw e;
    }
  }
  return 0;
}

/** The update that adds `counts` to the job's, on the condition it is still at the slice's version and running. */
function countUpdate(table: TableContext, slice: Slice, counts: Counts) {
  const entries = Object.entries(counts).filter(([, n]) => n > 0);
  return {
    TableName: table.tableName,
    Key: keys.erasureJob(slice.job.jobId),
    UpdateExpression: `SET ${[...entries.map((_, i) => `erased.#k${i} = if_not_exists(erased.#k${i}, :zero) + :n${i}`), 'updatedAt = :now'].join(', ')}`,
    ConditionExpression: 'version = :mine AND #status = :running',
    ExpressionAttributeNames: { '#status': 'status', ...Object.fromEntries(entries.map(([k], i) => [`#k${i}`, k])) },
    ExpressionAttributeValues: {
      ':zero': 0,
      ':mine': slice.job.version,
      ':running': 'running',
      ':now': nowIso(slice.now()),
      ...Object.fromEntries(entries.map(([, n], i) => [`:n${i}`, n])),
    },
  };
}

// ---- the steps

/**
 * Items one slice deletes at most (docs/behaviour.md#erasing-a-workspace), and deliveries (each
 * its partition: summary, state, attempts, replay links) at most: within the worker's timeout, in
 * the table's spare capacity.
 */
export const ERASURE_ITEMS_PER_SLICE = 1000;
export const ERASURE_DELIVERIES_PER_SLICE = 200;

/**
 * Items of a workspace's partition the credentials phase looks through in one slice at most (it
 * reads them, keys and hash only, and deletes the few hash items they name).
 */
const CREDENTIAL_PASS_PER_SLICE = 5 * ERASURE_ITEMS_PER_SLICE;

/** What one step did. */
export interface StepResult {
  /** Items deleted. */
  readonly deleted: number;
  /** The phase has nothing left. */
  readonly done: boolean;
  /** Where a paging phase goes on (null: from the start). */
  readonly cursor: string | null;
}

const decodeCursor = (cursor: string | null) => (cursor ? (JSON.parse(cursor) as Record<string, unknown>) : undefined);
const encodeCursor = (last: Record<string, unknown> | undefined) => (last ? JSON.stringify(last) : null);

/** The grace entry of an endpoint with a replaced secret (lambdas/store/endpoints.ts writes it). */
const graceEntryKey = (endpointId: string) => ({ pk: keys.secretGracePk, sk: endpointId });

/** The partitions keyed by a workspace's slug outside its own (its health counters, its recovery slots, its per-workspace quota windows). */
function slugPartitions(slug: string): string[] {
  return [
    keys.workspaceHealthPk(slug),
    keys.workspaceReplayedPk(slug),
    keys.recoveryLock(`WS#${slug}`).pk,
    ...Object.keys(WORKSPACE_QUOTA_NOUNS).map((bucket) => keys.rateLimit(bucket, slug, 0).pk),
  ];
}

/** Deletes what can be read of `pks`' partitions within `budget`; done when all were empty. */
async function erasePartitions(table: TableContext, slice: Slice, pks: readonly string[], budget: number): Promise<StepResult> {
  let deleted = 0;
  let done = true;
  for (const pk of pks) {
    if (deleted >= budget) return { deleted, done: false, cursor: null };
    const read = await readPartition(table, pk, budget - deleted);
    deleted += await deleteRead(table, slice, read.items);
    if (!read.complete) done = false;
  }
  return { deleted, done, cursor: null };
}

/** Delivery partitions read at once. */
const DELIVERY_READS_AT_ONCE = 25;

/** Items of one delivery's partition read at most (its attempts and replay links are bounded far below). */
const DELIVERY_ITEMS_MAX = 10_000;

/**
 * Deletes whole deliveries (every item of each one's partition), a few at a time, each summary
 * after the rest of its partition: the summary is what the indexes name the delivery by, so one
 * left by a crash is found again. Stops between groups once `budget` items are deleted.
 */
async function eraseDeliveries(table: TableContext, slice: Slice, ids: readonly string[], budget: number): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < ids.length && deleted < budget; i += DELIVERY_READS_AT_ONCE) {
    const reads = await Promise.all(
      ids.slice(i, i + DELIVERY_READS_AT_ONCE).map((id) => readPartition(table, keys.delivery(id).pk, DELIVERY_ITEMS_MAX)),
    );
    const items = reads.flatMap((r) => r.items);
    const isSummary = (item: Item) => item[TABLE.sortKey] === keys.delivery('').sk;
    deleted += await deleteRead(table, slice, [...items.filter((item) => !isSummary(item)), ...items.filter(isSummary)]);
  }
  return deleted;
}

/** Up to `limit` delivery ids of a workspace from its delivery log (every shard; the index may still name deleted ones). */
async function deliveriesOfWorkspaceLog(table: TableContext, slug: string, limit: number): Promise<string[]> {
  const perShard = Math.max(1, Math.ceil(limit / keys.deliveryLogShards));
  const reads = await Promise.all(
    Array.from({ length: keys.deliveryLogShards }, async (_, shard) => {
      const out = await table.doc.send(
        new QueryCommand({
          TableName: table.tableName,
          ...partitionQuery(keys.deliveryLogPk(slug, shard), { index: TABLE.deliveryLog }),
          Limit: perShard,
        }),
      );
      return (out.Items ?? []).map((item) => keys.deliveryIdOfPk(str(item, TABLE.partitionKey)));
    }),
  );
  return [...new Set(reads.flat())];
}

/**
 * Runs one bounded step of the current phase of a job claimed at `job.version`: deletes at most
 * `budget` items, each batch in the transaction that adds it to the job's counts (stamped by `now`).
 */
export async function eraseStep(table: TableContext, job: ErasureRecord, budget: number, now: () => Date): Promise<StepResult> {
  const slice: Slice = { job, now };
  const slug = job.workspace;
  const wsPk = keys.workspacePk(slug);
  switch (job.phase) {
    case 'credentials': {
      // Any item of the partition carrying a credential's hash, whatever its prefix: its hash item goes.
      // Few items hold one, so a slice looks through several pages of the partition.
      let deleted = 0;
      let start = decodeCursor(job.cursor);
      for (let looked = 0; looked < CREDENTIAL_PASS_PER_SLICE && deleted < budget; looked += budget) {
        const page = await readItems(table, wsPk, { limit: budget, start, filter: NAMES_A_CREDENTIAL });
        deleted += await deleteRead(table, slice, await existing(table, hashKeysOf(page.items)));
        start = page.last;
        if (!start) return { deleted, done: true, cursor: null };
      }
      return { deleted, done: false, cursor: encodeCursor(start) };
    }
    case 'subscriptions': {
      const page = await readItems(table, wsPk, { sk: { prefix: keys.subscriptionPrefix() }, limit: budget });
      return { deleted: await deleteRead(table, slice, page.items), done: !page.last, cursor: null };
    }
    case 'jobs': {
      // Each recovery job's partition (the job, its markers), then its entry: a running job's next slice finds no job and ends.
      const entries = await readItems(table, wsPk, { sk: { prefix: SK_PREFIX.job }, limit: 20 });
      let deleted = 0;
      for (const entry of entries.items) {
        const jobPk = keys.job(str(entry, TABLE.sortKey).slice(SK_PREFIX.job.length)).pk;
        const read = await readPartition(table, jobPk, Math.max(1, budget - deleted));
        deleted += await deleteRead(table, slice, read.items);
        if (!read.complete) return { deleted, done: false, cursor: null };
        deleted += await deleteRead(table, slice, [entry]);
        if (deleted >= budget) return { deleted, done: false, cursor: null };
      }
      return { deleted, done: !entries.last, cursor: null };
    }
    case 'deliveries': {
      const ids = await deliveriesOfWorkspaceLog(table, slug, ERASURE_DELIVERIES_PER_SLICE);
      return { deleted: await eraseDeliveries(table, slice, ids, budget), done: ids.length === 0, cursor: null };
    }
    case 'endpoints': {
      // Each endpoint with what it owns outside the partition (deliveries only its own index names,
      // health counters, recovery lock, grace entry), the endpoint item last.
      const endpoints = await readItems(table, wsPk, { sk: { prefix: SK_PREFIX.endpoint }, limit: 10 });
      let deleted = 0;
      for (const endpoint of endpoints.items) {
        const endpointId = str(endpoint, TABLE.sortKey).slice(SK_PREFIX.endpoint.length);
        const ids = await deliveriesOfEndpointIndexes(table, endpointId, ERASURE_DELIVERIES_PER_SLICE);
        deleted += await eraseDeliveries(table, slice, ids, budget - deleted);
        if (ids.length > 0) return { deleted, done: false, cursor: null };
        const owned = await erasePartitions(table, slice, [keys.endpointHealthPk(endpointId)], budget - deleted);
        deleted += owned.deleted;
        if (!owned.done) return { deleted, done: false, cursor: null };
        deleted += await deleteRead(table, slice, await existing(table, [keys.recoveryLock(endpointId), graceEntryKey(endpointId)]));
        deleted += await deleteRead(table, slice, [endpoint]);
        if (deleted >= budget) return { deleted, done: false, cursor: null };
      }
      return { deleted, done: !endpoints.last, cursor: null };
    }
    case 'tokens': {
      // Each token with what is keyed by its id (idempotency records, rate-limit windows) and its hash item, the token item last.
      const tokens = await readItems(table, wsPk, { sk: { prefix: SK_PREFIX.token }, limit: 10 });
      let deleted = 0;
      for (const token of tokens.items) {
        const tokenId = str(token, TABLE.sortKey).slice(SK_PREFIX.token.length);
        const owned = await erasePartitions(
          table,
          slice,
          [keys.idempotency(tokenId, '').pk, ...RATE_LIMIT_BUCKETS.map((bucket) => keys.rateLimit(bucket, tokenId, 0).pk)],
          budget - deleted,
        );
        deleted += owned.deleted;
        if (!owned.done) return { deleted, done: false, cursor: null };
        deleted += await deleteRead(table, slice, [...(await existing(table, hashKeysOf([token]))), token]);
        if (deleted >= budget) return { deleted, done: false, cursor: null };
      }
      return { deleted, done: !tokens.last, cursor: null };
    }
    case 'workspace':
    case 'finish': {
      // Every other item of the partition, whatever its kind, but the workspace item, which goes last;
      // a credential written since the first phases (a token minted meanwhile) with its hash item first,
      // so no hash item outlives its workspace to resolve in a new workspace of the same slug.
      let deleted = 0;
      let done = true;
      for (const sk of [{ below: 'META' }, { after: 'META' }] as const) {
        const page = await readItems(table, wsPk, { sk, limit: Math.max(1, budget - deleted) });
        deleted += await deleteRead(table, slice, await existing(table, hashKeysOf(page.items)));
        deleted += await deleteRead(table, slice, page.items);
        if (page.last) done = false;
      }
      return { deleted, done, cursor: null };
    }
    case 'outside':
      return erasePartitions(table, slice, slugPartitions(slug), budget);
  }
}

// ---- moving the job

/** Claims the next slice of a job read at its version (the version bumped); null when another worker moved it or it is not running. */
export async function claimErasureSlice(table: TableContext, job: ErasureRecord, now: Date): Promise<ErasureRecord | null> {
  try {
    await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: keys.erasureJob(job.jobId),
        UpdateExpression: 'SET version = :next, updatedAt = :now',
        ConditionExpression: 'version = :read AND #status = :running',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':next': job.version + 1, ':read': job.version, ':running': 'running', ':now': nowIso(now) },
      }),
    );
    return { ...job, version: job.version + 1, updatedAt: nowIso(now) };
  } catch (e) {
    if (e instanceof ConditionalCheckFailedException) return null;
    throw e;
  }
}

/** Saves where a claimed slice left the job (its phase, cursor and next slice time); false when it moved on meanwhile. */
export async function advanceErasure(
  table: TableContext,
  job: ErasureRecord,
  change: { readonly phase: ErasurePhase; readonly cursor: string | null; readonly nextSliceAt: Date },
  now: Date,
): Promise<boolean> {
  try {
    await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: keys.erasureJob(job.jobId),
        UpdateExpression: 'SET phase = :phase, #cursor = :cursor, nextSliceAt = :nsa, updatedAt = :now',
        ConditionExpression: 'version = :mine AND #status = :running',
        ExpressionAttributeNames: { '#status': 'status', '#cursor': 'cursor' },
        ExpressionAttributeValues: {
          ':phase': change.phase,
          ':cursor': change.cursor,
          ':nsa': nowIso(change.nextSliceAt),
          ':now': nowIso(now),
          ':mine': job.version,
          ':running': 'running',
        },
      }),
    );
    return true;
  } catch (e) {
    if (e instanceof ConditionalCheckFailedException) return false;
    throw e;
  }
}

/**
 * Ends an erasure whose workspace holds nothing but its item: in one transaction, the workspace
 * item deleted (the slug free again), the job completed and the platform audit entry with the
 * final counts. False when the job moved on meanwhile.
 */
export async function completeErasure(table: TableContext, job: ErasureRecord, now: Date): Promise<boolean> {
  const final = await getErasureRecord(table, job.jobId);
  if (!final || final.version !== job.version || final.status !== 'running') return false;
  // The workspace item itself is counted with the rest.
  const erased = { ...zeroCounts(), ...final.erased, other: (final.erased.other ?? 0) + 1 };
  try {
    await table.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: table.tableName,
              Key: keys.erasureJob(job.jobId),
              UpdateExpression:
                'SET #status = :completed, phase = :finish, erased = :erased, finishedAt = :now, updatedAt = :now REMOVE #cursor',
              ConditionExpression: 'version = :mine AND #status = :running',
              ExpressionAttributeNames: { '#status': 'status', '#cursor': 'cursor' },
              ExpressionAttributeValues: {
                ':completed': 'completed',
                ':finish': 'finish',
                ':erased': erased,
                ':now': nowIso(now),
                ':mine': job.version,
                ':running': 'running',
              },
            },
          },
          {
            Delete: {
              TableName: table.tableName,
              Key: keys.workspace(job.workspace),
              ConditionExpression: 'erasingJobId = :jobId',
              ExpressionAttributeValues: { ':jobId': job.jobId },
            },
          },
          platformAuditPut(
            table,
            job,
            {
              action: 'workspace.erased',
              requestedBy: job.requestedBy,
              detail: { erased, startedAt: job.createdAt, finishedAt: nowIso(now) },
            },
            now,
          ),
        ],
      }),
    );
    return true;
  } catch (e) {
    if (conditionFailedAt(e, 0)) return false;
    throw e;
  }
}

/**
 * Marks a running erasure failed (its slices kept failing), with the platform audit entry; the
 * workspace item stays, so its slug stays reserved until a new DELETE resumes the job. False when
 * there is no such job or it was no longer running.
 */
export async function failErasure(table: TableContext, jobId: string, reason: string, now: Date): Promise<boolean> {
  const job = await getErasureRecord(table, jobId);
  if (!job || job.status !== 'running') return false;
  try {
    await table.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: table.tableName,
              Key: keys.erasureJob(jobId),
              UpdateExpression: 'SET #status = :failed, failureReason = :reason, finishedAt = :now, updatedAt = :now',
              ConditionExpression: '#status = :running',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':failed': 'failed', ':reason': reason, ':now': nowIso(now), ':running': 'running' },
            },
          },
          platformAuditPut(
            table,
            job,
            { action: 'workspace.erasure_failed', requestedBy: 'system', detail: { reason, phase: job.phase } },
            now,
          ),
        ],
      }),
    );
    return true;
  } catch (e) {
    if (conditionFailedAt(e, 0)) return false;
    throw e;
  }
}
