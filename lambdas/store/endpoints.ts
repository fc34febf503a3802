/**
 * Webhook endpoints. The stored record carries the signing secrets, sealed
 * (docs/architecture.md#secrets); only {@link toEndpointWire} turns it into what
 * responses show, and it drops them. The endpoint item is in no index: a
 * replaced secret's grace window is tracked by a small item of its own, and its
 * subscriptions by one small item per event type (lambdas/store/subscriptions.ts), written in the
 * same transactions as the endpoint. Its delivery options (lambdas/domain/endpoint-options.ts) are
 * attributes of the endpoint item: `customHeaders` (secret values sealed as signing secrets are),
 * `auth` (its client secret sealed), `rateLimitPerSecond` and `filter` (the filter's JSON text,
 * copied onto the subscription items, which the publisher reads).
 */
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { AppError } from '../contract/errors';
import type { EndpointCore } from '../contract/schemas';
import { idPattern } from '../contract/ids';
import type { Page } from '../contract/pagination';
import type { SealedSecret, StoredSecret } from '../domain/secrets';
import {
  authForRead,
  headersForRead,
  type CustomHeaders,
  type EndpointOptions,
  type FilterDocument,
  type OAuthClientCredentials,
  type OptionsReader,
} from '../domain/endpoint-options';
import type { TableContext } from './client';
import { writeAudited, type AuditInput, type TransactItem } from './audit';
import { queryPage } from './pages';
import { planSubscriptionSteps, type SubscriptionState, type SubscriptionStep } from '../domain/subscription-plan';
import { filterStillIs, subscriptionWrites } from './subscriptions';
import { purgeJobPut } from './endpoint-purge';
import { keys, SK_PREFIX, TABLE } from './table-schema';
import {
  bool,
  conditionFailedAt,
  IF_ABSENT,
  IF_EXISTS,
  ifExistsAnd,
  type Item,
  ItemShapeError,
  mapList,
  num,
  optMap,
  optNum,
  optStr,
  partitionQuery,
  queryPages,
  str,
  strList,
  withExpressions,
} from './table-io';
import { writeCounted } from './workspace-counts';

/** The wire fields of the options, which {@link toEndpointWire} derives from `options`. */
type OptionWireFields = 'headers' | 'auth' | 'rateLimitPerSecond' | 'filter';

/** An endpoint as stored, secrets included (its health lives in the health counters). */
export interface EndpointRecord extends Omit<EndpointCore, OptionWireFields> {
  readonly workspace: string;
  readonly secrets: StoredSecret[];
  /** Bumped by each rotation; rotations are conditional on it. */
  readonly secretVersion: number;
  /** Until when the endpoint counts as slow (docs/behaviour.md#delivery-lanes); absent: never marked. */
  readonly slowUntil?: string | null;
  /** Its delivery options; absent or empty: none set. */
  readonly options?: EndpointOptions;
}

/** The wire form without its health (the operations add it): never a secret. */
export function toEndpointWire(r: EndpointRecord, reader: OptionsReader = 'read'): EndpointCore {
  const options = r.options;
  return {
    endpointId: r.endpointId,
    url: r.url,
    eventTypes: r.eventTypes,
    description: r.description ?? null,
    enabled: r.enabled,
    consecutiveFailures: r.consecutiveFailures,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    headers: headersForRead(options?.headers, reader),
    auth: authForRead(options?.auth),
    rateLimitPerSecond: options?.rateLimitPerSecond ?? null,
    filter: options?.filter ?? null,
  };
}

/** A stored secret of endpoint item `endpoint`, its attributes checked: one without a sealed value is a data fault. */
function storedSecret(endpoint: Item, item: Item): StoredSecret {
  const sealed = optMap(item, 'sealed');
  if (sealed === null) throw new ItemShapeError(`endpoint ${String(endpoint.endpointId)}: a secret has no sealed value`);
  return {
    sealed: {
      ciphertext: str(sealed, 'ciphertext'),
      iv: str(sealed, 'iv'),
      tag: str(sealed, 'tag'),
      dataKey: str(sealed, 'dataKey'),
    },
    createdAt: str(item, 'createdAt'),
    expiresAt: optStr(item, 'expiresAt'),
  };
}

/** A sealed value's attributes, checked: one that is not whole is a data fault. */
function sealedValue(endpoint: Item, sealed: Item | null, what: string): SealedSecret {
  if (sealed === null) throw new ItemShapeError(`endpoint ${String(endpoint.endpointId)}: ${what} has no sealed value`);
  return { ciphertext: str(sealed, 'ciphertext'), iv: str(sealed, 'iv'), tag: str(sealed, 'tag'), dataKey: str(sealed, 'dataKey') };
}

/** The endpoint item's options attributes as options, each checked. */
function optionsOf(item: Item): EndpointOptions {
  const headers = optMap(item, 'customHeaders');
  const auth = optMap(item, 'auth');
  const rate = optNum(item, 'rateLimitPerSecond');
  const filter = optStr(item, 'filter');
  const strings = (map: Item | null, what: string): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(map ?? {})) {
      if (typeof value !== 'string') throw new ItemShapeError(`endpoint ${String(item.endpointId)}: ${what} ${name} is not a string`);
      out[name] = value;
    }
    return out;
  };
  const sealed: Record<string, SealedSecret> = {};
  const sealedMap = headers ? optMap(headers, 'sealed') : null;
  for (const name of Object.keys(sealedMap ?? {})) sealed[name] = sealedValue(item, optMap(sealedMap!, name), `header ${name}`);
  const scope = auth ? optStr(auth, 'scope') : null;
  const audience = auth ? optStr(auth, 'audience') : null;
  return {
    ...(headers ? { headers: { plain: strings(optMap(headers, 'plain'), 'header'), sealed } } : {}),
    ...(auth
      ? {
          auth: {
            type: 'oauth2_client_credentials' as const,
            tokenUrl: str(auth, 'tokenUrl'),
            clientId: str(auth, 'clientId'),
            clientSecret: sealedValue(item, optMap(auth, 'clientSecret'), 'the OAuth client secret'),
            ...(scope === null ? {} : { scope }),
            ...(audience === null ? {} : { audience }),
          },
        }
      : {}),
    ...(rate === null ? {} : { rateLimitPerSecond: rate }),
    ...(filter === null ? {} : { filter: JSON.parse(filter) as FilterDocument }),
  };
}

/** A filter's stored form: its JSON text, as written (the text keeps its keys' order, which a map would not). */
const filterText = (filter: FilterDocument | null | undefined): string | null => (filter ? JSON.stringify(filter) : null);

/** The endpoint item's attributes of `options` (none for an option unset). */
function optionAttributes(options: EndpointOptions | undefined): Item {
  return {
    ...(options?.headers ? { customHeaders: options.headers } : {}),
    ...(options?.auth ? { auth: options.auth } : {}),
    ...(options?.rateLimitPerSecond === undefined ? {} : { rateLimitPerSecond: options.rateLimitPerSecond }),
    ...(options?.filter ? { filter: filterText(options.filter) } : {}),
  };
}

/** An endpoint item as a record, each attribute checked. */
function fromItem(item: Item): EndpointRecord {
  const options = optionsOf(item);
  return {
    endpointId: str(item, 'endpointId'),
    workspace: str(item, 'workspace'),
    url: str(item, 'url'),
    eventTypes: strList(item, 'eventTypes'),
    description: optStr(item, 'description'),
    enabled: bool(item, 'enabled'),
    consecutiveFailures: num(item, 'consecutiveFailures', 0),
    createdAt: str(item, 'createdAt'),
    updatedAt: str(item, 'updatedAt'),
    secrets: mapList(item, 'secrets').map((secret) => storedSecret(item, secret)),
    secretVersion: num(item, 'secretVersion', 0),
    slowUntil: optStr(item, 'slowUntil'),
    ...(Object.keys(options).length ? { options } : {}),
  };
}

/**
 * Marks an endpoint slow until `until` (docs/behaviour.md#delivery-lanes): one small update,
 * only of an endpoint that still exists (a deleted one is not brought back).
 */
export async function markEndpointSlow(table: TableContext, workspace: string, endpointId: string, until: string): Promise<void> {
  try {
    await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: keys.endpoint(workspace, endpointId),
        UpdateExpression: 'SET slowUntil = :until',
        ConditionExpression: IF_EXISTS,
        ExpressionAttributeValues: { ':until': until },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/** What an endpoint's subscription items copy: its event types, `enabled` and its filter's text (null: none). */
interface CopiedState extends SubscriptionState {
  readonly filter: string | null;
}

/** An endpoint's state as its subscription items copy it. */
const copiedStateOf = (r: EndpointRecord): CopiedState => ({
  eventTypes: r.eventTypes,
  enabled: r.enabled,
  filter: filterText(r.options?.filter),
});

/** The planner's view of a copied state. */
const subscriptionStateOf = (r: SubscriptionState): SubscriptionState => ({ eventTypes: r.eventTypes, enabled: r.enabled });

/**
 * Attribute changes of an update besides the subscription state: `SET` clauses, `REMOVE`d names,
 * and their names and values; `condition`, a further condition on the item (its `updatedAt` as read).
 */
interface ExtraChanges {
  sets: string[];
  removes: string[];
  names: Record<string, string>;
  values: Record<string, unknown>;
  condition?: string;
}

/**
 * The endpoint update of one step of a subscription change: the step's event types, `enabled` and
 * filter (plus `extra` changes), only if the endpoint is still in `from`, the state the step was
 * planned from.
 */
function stepUpdate(
  table: TableContext,
  slug: string,
  endpointId: string,
  from: CopiedState,
  to: CopiedState,
  extra?: ExtraChanges,
): TransactItem {
  const fromFilter = filterStillIs(from.filter);
  const sets = ['eventTypes = :types', 'enabled = :enabled', ...(to.filter === null ? [] : ['#filter = :filter']), ...(extra?.sets ?? [])];
  const removes = [...(to.filter === null ? ['#filter'] : []), ...(extra?.removes ?? [])];
  return {
    Update: {
      TableName: table.tableName,
      Key: keys.endpoint(slug, endpointId),
      UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
      ConditionExpression: ifExistsAnd(
        `eventTypes = :fromTypes AND enabled = :fromEnabled AND ${fromFilter.expression}${extra?.condition ? ` AND ${extra.condition}` : ''}`,
      ),
      ExpressionAttributeNames: { ...fromFilter.names, ...extra?.names },
      ExpressionAttributeValues: {
        ':types': to.eventTypes,
        ':enabled': to.enabled,
        ':fromTypes': from.eventTypes,
        ':fromEnabled': from.enabled,
        ...(to.filter === null ? {} : { ':filter': to.filter }),
        ...fromFilter.values,
        ...extra?.values,
      },
    },
  };
}

/** True when a transaction failed because another write got there first: its endpoint changed, or the two conflicted. */
function lostRace(error: unknown): boolean {
  return (
    conditionFailedAt(error, 0) ||
    (error instanceof TransactionCanceledException && (error.CancellationReasons ?? []).some((r) => r.Code === 'TransactionConflict'))
  );
}

/** Tries of an endpoint change against concurrent changes of the same endpoint (each failed try means another change won). */
const CHANGE_TRIES = 8;

/**
 * After a failed try of an endpoint change: waits before the next (exponential, with jitter, so a
 * crowd of writers spreads out), or throws: anything but a lost race as it is, and a race lost
 * {@link CHANGE_TRIES} times as 409 `Conflict`, which a caller may retry, never a 500.
 */
async function afterLostTry(error: unknown, tries: number, endpointId: string): Promise<void> {
  if (!lostRace(error)) throw error;
  if (tries >= CHANGE_TRIES)
    throw new AppError('Conflict', `Webhook endpoint ${endpointId} is being changed by other requests at the same time; retry.`);
  await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(500, 10 * 2 ** tries)));
}

/**
 * Runs the intermediate steps of a change (all but its last) that is too large for one
 * transaction; returns the state reached. The audit event, when `audit.pending`, goes with the
 * first step written (and `pending` is then cleared).
 */
async function runSteps(
  table: TableContext,
  slug: string,
  endpointId: string,
  from: CopiedState,
  steps: readonly SubscriptionStep[],
  filter: string | null,
  now: Date,
  audit?: { input: AuditInput; pending: boolean },
): Promise<CopiedState> {
  let state = from;
  for (const step of steps) {
    // The endpoint takes the new filter with the first step; the copies each step writes carry it.
    const next: CopiedState = { ...step.state!, filter };
    await writeAudited(
      table,
      [stepUpdate(table, slug, endpointId, state, next), ...subscriptionWrites(table, slug, endpointId, step.ops, filter)],
      slug,
      audit?.pending ? audit.input : undefined,
      now,
    );
    if (audit) audit.pending = false;
    state = next;
  }
  return state;
}

/**
 * Stores a new endpoint with its subscription items and its audit event, counted
 * (lambdas/store/workspace-counts.ts): with `limit`, false (and nothing written) when the
 * workspace already has that many endpoints.
 */
export async function putEndpoint(
  table: TableContext,
  record: EndpointRecord,
  now: Date,
  audit: AuditInput,
  limit?: number,
): Promise<boolean> {
  const [first, ...rest] = planSubscriptionSteps(null, subscriptionStateOf(record), { rewriteEnabled: false });
  const filter = filterText(record.options?.filter);
  const { options, ...fields } = record;
  const outcome = await writeCounted(
    table,
    record.workspace,
    { kind: 'endpoints', delta: 1, ...(limit === undefined ? {} : { limit }) },
    [
      {
        Put: {
          TableName: table.tableName,
          Item: {
            ...keys.endpoint(record.workspace, record.endpointId),
            type: 'endpoint',
            ...fields,
            ...optionAttributes(options),
            ...first!.state,
          },
          ConditionExpression: IF_ABSENT,
        },
      },
      ...subscriptionWrites(table, record.workspace, record.endpointId, first!.ops, filter),
    ],
    audit,
    now,
  );
  if (outcome !== 'written') return false;
  // More event types than one transaction takes: the rest in steps, each keeping endpoint and items agreeing.
  if (rest.length > 0) await runSteps(table, record.workspace, record.endpointId, { ...first!.state!, filter }, rest, filter, now);
  return true;
}

/** Reads an endpoint of a workspace (secrets included: internal use only). */
export async function getEndpointRecord(table: TableContext, slug: string, endpointId: string): Promise<EndpointRecord | null> {
  const out = await table.doc.send(
    new GetCommand({ TableName: table.tableName, Key: keys.endpoint(slug, endpointId), ConsistentRead: true }),
  );
  return out.Item ? fromItem(out.Item) : null;
}

/** Endpoints of a workspace, forward on id, their options as `reader` may see them. */
export function listEndpoints(
  table: TableContext,
  slug: string,
  limit: number,
  cursor?: string,
  reader: OptionsReader = 'read',
): Promise<Page<EndpointCore>> {
  return queryPage(table, {
    pk: keys.workspacePk(slug),
    skPrefix: SK_PREFIX.endpoint,
    forward: true,
    limit,
    cursor,
    idPattern: idPattern('whe'),
    map: (item) => {
      const value = toEndpointWire(fromItem(item), reader);
      return { value, sortKey: value.endpointId, id: value.endpointId };
    },
  });
}

/** Fields an update may change; an option set to null is removed. */
export interface EndpointChanges {
  url?: string;
  eventTypes?: string[];
  description?: string | null;
  enabled?: boolean;
  /** The whole header set after the change (lambdas/domain/endpoint-options.ts plans the merge and seals it). */
  headers?: CustomHeaders | null;
  auth?: OAuthClientCredentials | null;
  rateLimitPerSecond?: number | null;
  filter?: FilterDocument | null;
}

/** The item attribute of each option an update sets or removes as a whole. */
const OPTION_ATTRIBUTES = { headers: 'customHeaders', auth: 'auth', rateLimitPerSecond: 'rateLimitPerSecond' } as const;

/** What {@link updateEndpoint} answers when the endpoint changed since `expectedUpdatedAt`. */
export const ENDPOINT_CHANGED = 'changed';

/**
 * Applies only the sent fields, with the audit event, in one transaction; a change of the event
 * types or of `enabled` writes the subscription items in it too (a change of more than 95 of
 * them, in steps: lambdas/domain/subscription-plan.ts). Enabling resets the
 * failure streak. Returns the updated record, or null when absent. With `expectedUpdatedAt`
 * (the `updatedAt` the change was planned from: a header merge, a kept client secret), the
 * change is written only if the endpoint is still as read, else {@link ENDPOINT_CHANGED}: a
 * concurrent change is never overwritten silently.
 */
export async function updateEndpoint(
  table: TableContext,
  slug: string,
  endpointId: string,
  changes: EndpointChanges,
  now: Date,
  audit: AuditInput,
): Promise<EndpointRecord | null>;
export async function updateEndpoint(
  table: TableContext,
  slug: string,
  endpointId: string,
  changes: EndpointChanges,
  now: Date,
  audit: AuditInput,
  expectedUpdatedAt: string | undefined,
): Promise<EndpointRecord | null | typeof ENDPOINT_CHANGED>;
export async function updateEndpoint(
  table: TableContext,
  slug: string,
  endpointId: string,
  changes: EndpointChanges,
  now: Date,
  audit: AuditInput,
  expectedUpdatedAt?: string,
): Promise<EndpointRecord | null | typeof ENDPOINT_CHANGED> {
  const sets: string[] = ['updatedAt = :updatedAt'];
  const removes: string[] = [];
  const values: Record<string, unknown> = { ':updatedAt': now.toISOString() };
  const names: Record<string, string> = {};
  for (const field of ['url', 'description'] as const) {
    if (changes[field] === undefined) continue;
    names[`#${field}`] = field;
    values[`:${field}`] = changes[field];
    sets.push(`#${field} = :${field}`);
  }
  for (const [field, attribute] of Object.entries(OPTION_ATTRIBUTES) as [keyof typeof OPTION_ATTRIBUTES, string][]) {
    const value = changes[field];
    if (value === undefined) continue;
    names[`#${attribute}`] = attribute;
    if (value === null) removes.push(`#${attribute}`);
    else {
      values[`:${attribute}`] = value;
      sets.push(`#${attribute} = :${attribute}`);
    }
  }
  if (changes.enabled === true) {
    sets.push('consecutiveFailures = :zero');
    values[':zero'] = 0;
  }
  const condition = expectedUpdatedAt === undefined ? undefined : 'updatedAt = :expectedUpdatedAt';
  if (expectedUpdatedAt !== undefined) values[':expectedUpdatedAt'] = expectedUpdatedAt;
  if (changes.eventTypes !== undefined || changes.enabled !== undefined || changes.filter !== undefined)
    return updateSubscribed(table, slug, endpointId, changes, now, audit, { sets, removes, names, values, condition }, expectedUpdatedAt);
  try {
    const update: TransactItem = {
      Update: {
        TableName: table.tableName,
        Key: keys.endpoint(slug, endpointId),
        UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
        ConditionExpression: condition ? ifExistsAnd(condition) : IF_EXISTS,
        ExpressionAttributeValues: values,
        ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
      },
    };
    await writeAudited(table, [update], slug, audit, now);
  } catch (e) {
    if (expectedUpdatedAt !== undefined && lostRace(e)) return (await getEndpointRecord(table, slug, endpointId)) ? ENDPOINT_CHANGED : null;
    if (conditionFailedAt(e, 0)) return null;
    throw e;
  }
  return getEndpointRecord(table, slug, endpointId);
}

/**
 * An update that changes the subscriptions (their event types, or the `enabled` or filter copies):
 * read the endpoint, plan the steps from it, and write each conditional on the state it was planned
 * from; when another change got there first, read again and plan again (the audit event is written
 * once, with the first step). A new filter rewrites every kept copy.
 */
async function updateSubscribed(
  table: TableContext,
  slug: string,
  endpointId: string,
  changes: EndpointChanges,
  now: Date,
  audit: AuditInput,
  extra: ExtraChanges,
  expectedUpdatedAt: string | undefined,
): Promise<EndpointRecord | null | typeof ENDPOINT_CHANGED> {
  const auditing = { input: audit, pending: true };
  for (let tries = 1; ; tries++) {
    const current = await getEndpointRecord(table, slug, endpointId);
    if (!current) return null;
    if (expectedUpdatedAt !== undefined && current.updatedAt !== expectedUpdatedAt) return ENDPOINT_CHANGED;
    const from = copiedStateOf(current);
    const filter = changes.filter === undefined ? from.filter : filterText(changes.filter);
    const to: CopiedState = {
      eventTypes: changes.eventTypes ?? current.eventTypes,
      enabled: changes.enabled ?? current.enabled,
      filter,
    };
    const steps = planSubscriptionSteps(subscriptionStateOf(from), subscriptionStateOf(to), {
      rewriteEnabled: changes.enabled !== undefined || filter !== from.filter,
    });
    const last = steps[steps.length - 1]!;
    try {
      const reached = await runSteps(table, slug, endpointId, from, steps.slice(0, -1), filter, now, auditing);
      await writeAudited(
        table,
        [stepUpdate(table, slug, endpointId, reached, to, extra), ...subscriptionWrites(table, slug, endpointId, last.ops, filter)],
        slug,
        auditing.pending ? audit : undefined,
        now,
      );
      return getEndpointRecord(table, slug, endpointId);
    } catch (e) {
      await afterLostTry(e, tries, endpointId);
    }
  }
}

/** Outcome of a conditional secret write. */
export type SecretWrite = 'ok' | 'not_found' | 'conflict';

/**
 * The grace entry of an endpoint with a replaced secret: its own item, in the
 * grace index (gsi1) by grace end, holding the endpoint's keys and nothing else,
 * so no index ever carries a secret (docs/architecture.md#secrets).
 */
function graceEntryKey(endpointId: string) {
  return { pk: keys.secretGracePk, sk: endpointId };
}

/** The grace entry's write: present while a replaced secret is in its window, absent otherwise. */
function graceEntryWrite(table: TableContext, slug: string, endpointId: string, graceEnd: string | null): TransactItem {
  return graceEnd
    ? {
        Put: {
          TableName: table.tableName,
          Item: {
            ...graceEntryKey(endpointId),
            type: 'secret_grace',
            workspace: slug,
            endpointId,
            [TABLE.gsi1.partitionKey]: keys.secretGracePk,
            [TABLE.gsi1.sortKey]: keys.secretGraceSk(graceEnd, endpointId),
          },
        },
      }
    : { Delete: { TableName: table.tableName, Key: graceEntryKey(endpointId) } };
}

/**
 * Stores rotated secrets if no other rotation happened since `expectedVersion`
 * was read, and the grace entry of the replaced one, in one transaction.
 */
export async function writeEndpointSecrets(
  table: TableContext,
  slug: string,
  endpointId: string,
  secrets: StoredSecret[],
  expectedVersion: number,
  now: Date,
  audit: AuditInput,
): Promise<SecretWrite> {
  const graceEnd = secrets[1]?.expiresAt ?? null;
  try {
    const update: TransactItem = {
      Update: {
        TableName: table.tableName,
        Key: keys.endpoint(slug, endpointId),
        UpdateExpression: 'SET secrets = :s, secretVersion = :next, updatedAt = :now',
        ConditionExpression: ifExistsAnd('(attribute_not_exists(secretVersion) OR secretVersion = :expected)'),
        ExpressionAttributeValues: { ':s': secrets, ':next': expectedVersion + 1, ':expected': expectedVersion, ':now': now.toISOString() },
      },
    };
    await writeAudited(table, [update, graceEntryWrite(table, slug, endpointId, graceEnd)], slug, audit, now);
    return 'ok';
  } catch (e) {
    if (conditionFailedAt(e, 0)) {
      return (await getEndpointRecord(table, slug, endpointId)) ? 'conflict' : 'not_found';
    }
    throw e;
  }
}

/**
 * Deletes an endpoint with its subscription items (with its audit event). Its deliveries are hidden
 * from every read from then on (the endpoint item's absence is their tombstone:
 * {@link liveEndpointIds}); `purge.jobId` puts, in the same transaction, the job that deletes them
 * in paced slices (lambdas/store/endpoint-purge.ts), so a long history never holds up the delete.
 * The endpoint is read first, for the event types whose items go with it; the delete is
 * conditional on them, so a concurrent change of the types is read again, not left behind.
 */
export async function deleteEndpoint(
  table: TableContext,
  slug: string,
  endpointId: string,
  now: Date,
  audit: AuditInput,
  purge?: { readonly jobId: string },
): Promise<boolean> {
  for (let tries = 1; ; tries++) {
    const current = await getEndpointRecord(table, slug, endpointId);
    if (!current) return false;
    const steps = planSubscriptionSteps(subscriptionStateOf(current), null, { rewriteEnabled: false });
    const from = copiedStateOf(current);
    try {
      const reached = await runSteps(table, slug, endpointId, from, steps.slice(0, -1), from.filter, now);
      // Counted: the delete frees a slot of the workspace's endpoint limit.
      await writeCounted(
        table,
        slug,
        { kind: 'endpoints', delta: -1 },
        [
          {
            Delete: {
              TableName: table.tableName,
              Key: keys.endpoint(slug, endpointId),
              ConditionExpression: ifExistsAnd('eventTypes = :types'),
              ExpressionAttributeValues: { ':types': reached.eventTypes },
            },
          },
          graceEntryWrite(table, slug, endpointId, null),
          ...subscriptionWrites(table, slug, endpointId, steps[steps.length - 1]!.ops, null),
          ...(purge ? [purgeJobPut(table, { jobId: purge.jobId, workspace: slug, endpointId }, now)] : []),
        ],
        audit,
        now,
      );
      break;
    } catch (e) {
      await afterLostTry(e, tries, endpointId);
    }
  }
  return true;
}

/**
 * The ids among `endpointIds` of endpoints that exist in the workspace, strongly consistent: a
 * delivery whose endpoint is not among them belongs to a deleted endpoint and is shown nowhere
 * (docs/behaviour.md#deleting-an-endpoint). One batch read per 100 distinct ids (a page names few).
 */
export async function liveEndpointIds(table: TableContext, slug: string, endpointIds: Iterable<string>): Promise<Set<string>> {
  const unique = [...new Set(endpointIds)];
  const live = new Set<string>();
  for (let i = 0; i < unique.length; i += 100) {
    let pending: Record<string, unknown>[] = unique.slice(i, i + 100).map((id) => keys.endpoint(slug, id));
    for (let tries = 0; pending.length > 0 && tries < 10; tries++) {
      const out = await table.doc.send(
        new BatchGetCommand({
          RequestItems: {
            [table.tableName]: { Keys: pending, ConsistentRead: true, ProjectionExpression: `${TABLE.partitionKey}, ${TABLE.sortKey}` },
          },
        }),
      );
      for (const item of out.Responses?.[table.tableName] ?? []) live.add(str(item, TABLE.sortKey).slice(SK_PREFIX.endpoint.length));
      pending = out.UnprocessedKeys?.[table.tableName]?.Keys ?? [];
    }
    if (pending.length > 0) throw new Error(`DynamoDB left ${pending.length} reads unprocessed after 10 tries`);
  }
  return live;
}

/** Endpoint counts of a workspace, from one read of their `enabled` flags. */
export async function countEndpoints(table: TableContext, slug: string): Promise<{ total: number; enabled: number }> {
  let total = 0;
  let enabled = 0;
  for await (const page of queryPages(table, {
    ...partitionQuery(keys.workspacePk(slug), { sk: { prefix: SK_PREFIX.endpoint } }),
    ProjectionExpression: 'enabled',
  })) {
    for (const item of page.Items ?? []) {
      total++;
      if (item.enabled === true) enabled++;
    }
  }
  return { total, enabled };
}

/** An endpoint whose replaced secret's grace window ended: keys only. */
export interface EndedGrace {
  readonly workspace: string;
  readonly endpointId: string;
}

/** Endpoints whose replaced secret's grace window ended before `now` (the grace items' sparse gsi1 entries). Reads keys only. */
export async function endpointsWithEndedGrace(table: TableContext, now: Date, limit: number): Promise<EndedGrace[]> {
  const out = await table.doc.send(
    new QueryCommand({
      TableName: table.tableName,
      ...withExpressions(partitionQuery(keys.secretGracePk, { index: TABLE.gsi1, sk: { below: now.toISOString() } }), {
        names: { '#ws': 'workspace', '#id': 'endpointId' },
      }),
      ProjectionExpression: '#ws, #id',
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((item) => ({ workspace: str(item, 'workspace'), endpointId: str(item, 'endpointId') }));
}

/**
 * Keeps only `secrets` (the still-active ones) if no rotation happened since the record was read,
 * and drops the grace entry. An endpoint that is
 * gone (`record` null) only loses its grace entry.
 */
export async function dropExpiredSecrets(
  table: TableContext,
  ended: EndedGrace,
  record: EndpointRecord | null,
  secrets: StoredSecret[],
): Promise<boolean> {
  const dropEntry = graceEntryWrite(table, ended.workspace, ended.endpointId, null);
  try {
    await table.doc.send(
      new TransactWriteCommand({
        TransactItems: record
          ? [
              {
                Update: {
                  TableName: table.tableName,
                  Key: keys.endpoint(record.workspace, record.endpointId),
                  UpdateExpression: 'SET secrets = :s, secretVersion = :next',
                  ConditionExpression: 'secretVersion = :expected',
                  ExpressionAttributeValues: { ':s': secrets, ':next': record.secretVersion + 1, ':expected': record.secretVersion },
                },
              },
              dropEntry,
            ]
          : [dropEntry],
      }),
    );
    return true;
  } catch (e) {
    if (conditionFailedAt(e, 0)) return false;
    throw e;
  }
}
