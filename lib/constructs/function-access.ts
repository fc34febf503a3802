/**
 * Which AWS actions each kind of function needs, in one place (docs/architecture.md#the-iam-check):
 * the table's item actions and the indexes each function queries, per operation and per pipeline
 * or scheduled function, and the queue actions of a sender and of a consumer. The constructs grant
 * exactly these; the IAM journey test (test/iam) proves every call allowed and every grant used or
 * listed there with its reason.
 */
import { Names } from 'aws-cdk-lib';
import type { IGrantable, IRole } from 'aws-cdk-lib/aws-iam';
import type { EventSourceMappingOptions, IDestination, IEventSourceDlq, IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { OperationDef, OperationId } from '#lambdas/contract/operations';
import type { QueryTarget } from './table';

/** A DynamoDB item action a function may be granted (a transaction's items are checked as these). */
type TableAction =
  | 'dynamodb:GetItem'
  | 'dynamodb:BatchGetItem'
  | 'dynamodb:PutItem'
  | 'dynamodb:UpdateItem'
  | 'dynamodb:DeleteItem'
  | 'dynamodb:BatchWriteItem'
  | 'dynamodb:ConditionCheckItem';

/** A function's access to the table: its item actions, and where it queries (`dynamodb:Query` on exactly those; an index by its name in the schema). */
export interface TableAccess {
  readonly actions: readonly TableAction[];
  readonly queries: readonly QueryTarget[];
}

const GET = 'dynamodb:GetItem';
const BATCH_GET = 'dynamodb:BatchGetItem';
const PUT = 'dynamodb:PutItem';
const UPDATE = 'dynamodb:UpdateItem';
const DELETE = 'dynamodb:DeleteItem';
const BATCH_WRITE = 'dynamodb:BatchWriteItem';
const CONDITION_CHECK = 'dynamodb:ConditionCheckItem';

const access = (actions: readonly TableAction[], queries: readonly QueryTarget[] = []): TableAccess => ({ actions, queries });

/**
 * What an operation's own code reads and writes, beside the request machinery every operation
 * shares: the rate-limit counters (a read gets only its bucket's, lib/constructs/table.ts) and,
 * for an `idempotent` operation, its idempotency record ({@link IDEMPOTENCY_RECORD}).
 */
const OPERATION_TABLE_ACCESS: { readonly [K in OperationId]: TableAccess } = {
  listWebhooks: access([], ['table']),
  // The endpoint, its subscriptions, the per-workspace endpoint count (counted by a Query when its counter item is missing).
  createWebhook: access([GET, PUT, UPDATE], ['table']),
  getWebhook: access([GET], ['table']),
  // A change of event types deletes the subscriptions dropped.
  updateWebhook: access([GET, PUT, UPDATE, DELETE], ['table']),
  // The endpoint, its subscriptions and grace entry deleted with the purge job put beside them (the job removes the history).
  deleteWebhook: access([GET, PUT, UPDATE, DELETE]),
  // The previous secret's grace entry is replaced.
  rotateWebhookSecret: access([GET, PUT, UPDATE, DELETE]),
  sendWebhookTestEvent: access([GET, PUT]),
  listWebhookDeliveries: access([GET, BATCH_GET], ['gsi2']),
  // A delivery of a deleted endpoint is shown nowhere: its endpoint is looked up (BatchGet) with it;
  // its replays are its partition's links (Query) and their state items (BatchGet).
  getWebhookDelivery: access([BATCH_GET], ['table']),
  listWebhookDeliveryAttempts: access([GET, BATCH_GET], ['table']),
  // The replay, its link and its source's marker (Put); a first replay of a dead letter counts it replayed (Update).
  replayWebhookDelivery: access([GET, BATCH_GET, PUT, UPDATE], ['table']),
  listEventTypes: access([]),
  // Counts, the workspace's health hours and its replayed dead letters per hour (Query).
  getWorkspaceOverview: access([GET], ['table']),
  listMembers: access([], ['table']),
  listApiTokens: access([], ['table']),
  createApiToken: access([GET, PUT, UPDATE], ['table']),
  revokeApiToken: access([GET, PUT, UPDATE, DELETE], ['table']),
  listAuditEvents: access([], ['table']),
  listNotifications: access([], ['table']),
  // The workspace log, an endpoint's shards of gsi2 when filtered by endpoint (after checking the endpoint is the
  // workspace's), or one event's partition of eventDeliveries when filtered by event.
  listDeliveries: access([GET, BATCH_GET], ['deliveryLog', 'eventDeliveries', 'gsi2']),
  getWebhookHealth: access([GET], ['table']),
  // The job record, the workspace's running job, the window's failed deliveries by gsi2 (a dry run counts them).
  recoverWebhookDeliveries: access([GET, BATCH_GET, PUT, UPDATE, DELETE], ['gsi2']),
  getJob: access([GET]),
  // Cancelling a running job finishes it: its record updated, its slot deleted, an audit entry.
  cancelJob: access([GET, PUT, UPDATE, DELETE]),
  // The workspace's job entries (a Query of its partition), then each job of the page by id.
  listJobs: access([GET], ['table']),
  // The notification read, then set acknowledged with its audit entry in one transaction.
  ackNotification: access([GET, PUT, UPDATE]),
  // A filter evaluated against the payload sent: nothing read or written.
  testWebhookFilter: access([]),
  // The caller's token re-read; the session and its link's code put with the audit entry in one
  // transaction (UpdateItem: its rate-limit counter, as every writer's).
  createPortalSession: access([GET, PUT, UPDATE]),
  // The workspace's sessions (a Query of its partition), the expired ones filtered out.
  listPortalSessions: access([], ['table']),
  // The session read, then deleted with its code, its token's hash and the audit entry in one transaction.
  revokePortalSession: access([GET, PUT, UPDATE, DELETE]),
  // The code and its session read; the code deleted, the session updated and the token's hash put in
  // one transaction; the branding read for the answer.
  exchangePortalSession: access([GET, PUT, UPDATE, DELETE]),
  // Staff sign-in (docs/behaviour.md#staff-sign-in). The nonce's hash item, put with its expiry.
  createConsoleNonce: access([PUT]),
  // The nonce consumed by one conditional delete; the session and its token's hash item put.
  createConsoleSession: access([PUT, DELETE]),
  // The staff sessions (a Query of their partition), the ended ones filtered out.
  listConsoleSessions: access([], ['table']),
  // The session read (whose it is), then deleted with its token's hash item.
  revokeConsoleSession: access([GET, DELETE]),
  // A workspace's own caller: its workspace read; a staff session: the workspace registry (gsi1).
  listWorkspaces: access([GET], ['gsi1']),
  getBranding: access([GET]),
  // The caller's token re-read; the branding item replaced with its audit entry in one transaction.
  setBranding: access([GET, PUT, UPDATE]),
  // The platform API (docs/api.md#platform-api). The workspace, its owner and its audit entry in one
  // transaction; on a taken slug, the workspace read to say why.
  platformCreateWorkspace: access([GET, PUT]),
  // The workspace registry (gsi1 projects whole workspace items).
  platformListWorkspaces: access([], ['gsi1']),
  platformGetWorkspace: access([GET]),
  // The conditional rename, then its audit entry; on a refused condition, the workspace read to say why.
  platformUpdateWorkspace: access([GET, PUT, UPDATE]),
  // The erasure's start (lambdas/operations/workspace-erasure.ts): the workspace marked and the job
  // record written in one transaction, then the workspace's credentials found (a Query of its
  // partition) and their hash items deleted in batches, so access ends before the answer.
  platformDeleteWorkspace: access([GET, PUT, UPDATE, BATCH_WRITE], ['table']),
  // As createPortalSession, on the workspace read first (missing: 404; being erased: 409).
  platformCreatePortalSession: access([GET, PUT, UPDATE]),
  platformGetJob: access([GET]),
  // As createApiToken: the token, its hash item and the workspace's token count (counted by a Query when missing).
  platformCreateApiToken: access([GET, PUT, UPDATE], ['table']),
};

/** The idempotency record an `idempotent` operation claims (Put), reads (Get), completes (Update) or releases (Delete). */
const IDEMPOTENCY_RECORD: readonly TableAction[] = [GET, PUT, UPDATE, DELETE];

/**
 * A dispatcher, either lane: attempts, summaries, health counters, notifications, the endpoints' rate
 * budgets (one Update per batch and rate-limited endpoint); a failure streak
 * disables the endpoint (its subscriptions deleted, on the condition the endpoint is still the one read).
 */
const DISPATCHER = access([GET, PUT, UPDATE, DELETE, CONDITION_CHECK], ['table']);

/**
 * The functions beside the operations, by Lambda entry (`lambdas/functions/<entry>.ts`); the
 * authorizer's only table access is the token lookup by hash (`ServiceTable.grantTokenLookup`).
 */
const FUNCTION_TABLE_ACCESS: Readonly<Record<string, TableAccess>> = {
  dispatcher: DISPATCHER,
  'slow-dispatcher': DISPATCHER,
  'dead-letter': access([GET, PUT, UPDATE], ['table']),
  publisher: access([GET, PUT], ['table']),
  // A slice replays the window's failed deliveries, each on the condition its endpoint is unchanged;
  // a purge slice removes a deleted endpoint's deliveries (their index entries, gsi1 and gsi2, then
  // each delivery's partition, and its health counters) in batches; an erasure slice reads a
  // workspace's partitions, its delivery log (deliveryLog) and its endpoints' deliveries (gsi1,
  // gsi2), deletes what it read in batches, and ends with the workspace item's delete, the job's
  // update and the platform audit entry's put in one transaction.
  'recovery-worker': access([GET, BATCH_GET, PUT, UPDATE, DELETE, CONDITION_CHECK, BATCH_WRITE], ['table', 'gsi1', 'gsi2', 'deliveryLog']),
  // Expired log entries and partitions removed in batches; workspaces from the registry (gsi1); its cursor.
  retention: access([GET, PUT, BATCH_WRITE], ['table', 'gsi1', 'deliveryLog']),
  // Endpoints whose previous secret's grace ended (gsi1): the secret dropped, the grace entry deleted.
  'secret-expiry': access([GET, UPDATE, DELETE], ['gsi1']),
  // Pending deliveries by the repair index, their summaries read in batches, and sent again; those
  // of a deleted endpoint (looked up in a batch) have their partitions removed instead.
  'pending-repair': access([BATCH_GET, BATCH_WRITE], ['table', 'gsi3']),
};

const union = (accesses: readonly TableAccess[]): TableAccess => ({
  actions: [...new Set(accesses.flatMap((a) => a.actions))].sort(),
  queries: [...new Set(accesses.flatMap((a) => a.queries))].sort(),
});

/** The table access of the function running `def` (its own code, plus its idempotency record when it takes keys). */
function operationTableAccess(def: Pick<OperationDef, 'operationId' | 'idempotent'>): TableAccess {
  const own = OPERATION_TABLE_ACCESS[def.operationId as OperationId];
  if (!own) throw new Error(`No table access is declared for the operation ${def.operationId} (lib/constructs/function-access.ts)`);
  return def.idempotent ? union([own, access(IDEMPOTENCY_RECORD)]) : own;
}

/** The table access of a function running every one of `defs`: one operation's (REST), or all of them (MCP). */
export function operationsTableAccess(defs: readonly Pick<OperationDef, 'operationId' | 'idempotent'>[]): TableAccess {
  return union(defs.map(operationTableAccess));
}

/** The table access of the function at Lambda entry `entry` (not an operation's); fails synth when none is declared. */
export function functionTableAccess(entry: string): TableAccess {
  const declared = FUNCTION_TABLE_ACCESS[entry];
  if (!declared) throw new Error(`No table access is declared for the function ${entry} (lib/constructs/function-access.ts)`);
  return declared;
}

/**
 * Lets a function send to `queue`: `sqs:SendMessage` only (SendMessageBatch is authorized as it).
 * Not CDK's `grantSendMessages`, which adds GetQueueAttributes and GetQueueUrl: the functions get
 * the queue's URL from their environment and never read its attributes.
 */
export function grantSend(queue: IQueue, grantee: IGrantable): void {
  queue.grant(grantee, 'sqs:SendMessage');
}

/**
 * An asynchronous invocation's destination queue, granted as {@link grantSend} grants (CDK's
 * `SqsDestination` grants `grantSendMessages`: GetQueueAttributes and GetQueueUrl too, which
 * Lambda does not use to deliver a failed event).
 */
export function sendOnlyDestination(queue: IQueue): IDestination {
  return {
    bind: (_scope, fn) => {
      grantSend(queue, fn);
      return { destination: queue.queueArn };
    },
  };
}

/**
 * A stream event source mapping's on-failure queue, granted as {@link grantSend} grants (CDK's
 * `SqsDlq` grants `grantSendMessages`: GetQueueAttributes and GetQueueUrl too, which Lambda does
 * not use to send a failed batch's record positions).
 */
export function sendOnlyEventSourceDlq(queue: IQueue): IEventSourceDlq {
  return {
    bind: (_mapping, fn) => {
      grantSend(queue, fn);
      return { destination: queue.queueArn };
    },
  };
}

/** How a function polls a queue: the event source mapping's settings, and whether its code changes visibility. */
interface QueuePolling extends Pick<
  EventSourceMappingOptions,
  'batchSize' | 'maxBatchingWindow' | 'maxConcurrency' | 'reportBatchItemFailures'
> {
  /** True for a consumer whose code backs off by ChangeMessageVisibility (the dispatchers). */
  readonly changesVisibility: boolean;
}

/**
 * Makes `fn` poll `queue` (as CDK's `SqsEventSource`, under the same construct id) and grants its
 * role what the event source mapping needs: receive, delete, and read the queue's attributes;
 * ChangeMessageVisibility only with `changesVisibility`. Not `SqsEventSource`, whose
 * `grantConsumeMessages` adds GetQueueUrl and ChangeMessageVisibility to every consumer.
 */
export function pollQueue(fn: IFunction & { readonly role?: IRole }, queue: IQueue, polling: QueuePolling): void {
  const { changesVisibility, ...options } = polling;
  fn.addEventSourceMapping(`SqsEventSource:${Names.nodeUniqueId(queue.node)}`, { ...options, eventSourceArn: queue.queueArn });
  queue.grant(
    fn,
    'sqs:ReceiveMessage',
    'sqs:DeleteMessage',
    'sqs:GetQueueAttributes',
    ...(changesVisibility ? ['sqs:ChangeMessageVisibility'] : []),
  );
}
