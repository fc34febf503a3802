/**
 * Subscription items (docs/architecture.md#subscriptions): one small item per (endpoint, subscribed
 * event type) in the workspace's partition, `SUB#<eventType>#<endpointId>`, holding a copy of the
 * endpoint's `enabled` flag and of its payload filter (JSON text, when it has one) and nothing else
 * (the endpoint id is the sort key's last part). The publisher reads the subscribers of an event's
 * type with one Query of these items, so its cost follows the subscribers of the type, not the
 * workspace's endpoints, and it applies their filters without reading an endpoint (an endpoint item
 * is about 1 KB; a subscription item about 100 bytes, plus its filter's text).
 *
 * They are written in the endpoint's own transactions (lambdas/store/endpoints.ts), planned by
 * `planSubscriptionSteps` (lambdas/domain/subscription-plan.ts); a write of the endpoint item alone
 * (the dispatcher's auto-disable) is followed by {@link syncSubscriptionCopies}.
 */
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { MAX_TRANSACTION_ITEMS, type SubscriptionOp, type SubscriptionState } from '../domain/subscription-plan';
import type { TableContext } from './client';
import type { TransactItem } from './audit';
import {
  conditionFailedAt,
  IF_ABSENT,
  ifExistsAnd,
  optStr,
  partitionQuery,
  queryPages,
  str,
  strList,
  withExpressions,
  type Item,
} from './table-io';
import { keys, TABLE } from './table-schema';

/**
 * The transaction items of `ops` for one endpoint; a put copies `filter`, the endpoint's payload
 * filter as JSON text (null: none).
 */
export function subscriptionWrites(
  table: TableContext,
  slug: string,
  endpointId: string,
  ops: readonly SubscriptionOp[],
  filter: string | null,
): TransactItem[] {
  return ops.map((op) => {
    const key = keys.subscription(slug, op.eventType, endpointId);
    return op.kind === 'put'
      ? {
          Put: {
            TableName: table.tableName,
            Item: { ...key, type: 'subscription', enabled: op.enabled, ...(filter === null ? {} : { filter }) },
          },
        }
      : { Delete: { TableName: table.tableName, Key: key } };
  });
}

/** `filter` is a reserved word of DynamoDB's expressions: its placeholder. */
const FILTER_NAME = { names: { '#filter': 'filter' } };

/** A subscriber of an event type, as the publisher fans out to it. */
export interface Subscriber {
  readonly endpointId: string;
  readonly enabled: boolean;
  /** The endpoint's payload filter, as JSON text; null when it has none (every event goes to it). */
  readonly filter: string | null;
}

/** The subscribers of `eventType` in a workspace, from its subscription items: one Query of small items. */
async function subscribersOf(table: TableContext, slug: string, eventType: string): Promise<Subscriber[]> {
  const out: Subscriber[] = [];
  for await (const page of queryPages(table, {
    ...withExpressions(partitionQuery(keys.workspacePk(slug), { sk: { prefix: keys.subscriptionPrefix(eventType) } }), FILTER_NAME),
    ProjectionExpression: `${TABLE.sortKey}, enabled, #filter`,
  })) {
    for (const item of page.Items ?? [])
      out.push({
        endpointId: keys.subscriptionOfSk(str(item, TABLE.sortKey)).endpointId,
        enabled: item.enabled === true,
        filter: optStr(item, 'filter'),
      });
  }
  return out;
}

/** An endpoint as the reconcile reads it: what its subscriptions need. */
interface EndpointView extends SubscriptionState {
  readonly endpointId: string;
  readonly filter: string | null;
}

/** An endpoint item's projection as the reconcile's view, each attribute checked (absent event types: none; enabled only when true). */
function endpointView(item: Item): EndpointView {
  return {
    endpointId: str(item, 'endpointId'),
    eventTypes: strList(item, 'eventTypes'),
    enabled: item.enabled === true,
    filter: optStr(item, 'filter'),
  };
}

const VIEW = {
  ProjectionExpression: 'endpointId, eventTypes, enabled, #filter',
  ExpressionAttributeNames: { '#filter': 'filter' },
} as const;

async function readEndpointView(table: TableContext, slug: string, endpointId: string): Promise<EndpointView | null> {
  const out = await table.doc.send(
    new GetCommand({ TableName: table.tableName, Key: keys.endpoint(slug, endpointId), ConsistentRead: true, ...VIEW }),
  );
  return out.Item ? endpointView(out.Item) : null;
}

/**
 * The condition that an endpoint's item still has `filter` (JSON text; null: none), for a write of
 * subscription copies computed from it: its expression, names and values.
 */
export function filterStillIs(filter: string | null): {
  expression: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
} {
  return filter === null
    ? { expression: 'attribute_not_exists(#filter)', names: { '#filter': 'filter' }, values: {} }
    : { expression: '#filter = :fromFilter', names: { '#filter': 'filter' }, values: { ':fromFilter': filter } };
}

/** The condition that an endpoint is still in `state` (or, for null, gone): what a reconcile's writes were computed from. */
function endpointStillIs(table: TableContext, slug: string, endpointId: string, state: EndpointView | null): TransactItem {
  const Key = keys.endpoint(slug, endpointId);
  if (!state) return { ConditionCheck: { TableName: table.tableName, Key, ConditionExpression: IF_ABSENT } };
  const filter = filterStillIs(state.filter);
  return {
    ConditionCheck: {
      TableName: table.tableName,
      Key,
      ConditionExpression: ifExistsAnd(`eventTypes = :types AND enabled = :enabled AND ${filter.expression}`),
      ExpressionAttributeNames: filter.names,
      ExpressionAttributeValues: { ':types': state.eventTypes, ':enabled': state.enabled, ...filter.values },
    },
  };
}

/** A subscription item's copies: the endpoint's `enabled` flag and filter. */
interface SubscriptionCopy {
  readonly enabled: boolean;
  readonly filter: string | null;
}

/** Tries of one endpoint's reconcile: each failed try means a concurrent change of that endpoint. */
const RECONCILE_TRIES = 5;

/**
 * Brings one endpoint's subscription items in step with its item: puts the missing or different
 * ones, deletes the extra ones. Each transaction is conditional on the endpoint still being as read,
 * so a concurrent create, update or delete (which writes its own items) is never overwritten with
 * a stale copy: on a failed condition the endpoint is read again.
 */
async function reconcileEndpoint(
  table: TableContext,
  slug: string,
  endpointId: string,
  seen: EndpointView | null,
  existing: ReadonlyMap<string, SubscriptionCopy>,
): Promise<void> {
  let endpoint = seen;
  let items = existing;
  for (let tries = 1; ; tries++) {
    const ops: SubscriptionOp[] = [];
    const want = new Set(endpoint?.eventTypes ?? []);
    for (const [eventType] of items) if (!want.has(eventType)) ops.push({ eventType, kind: 'delete', enabled: false });
    for (const eventType of want) {
      const copy = items.get(eventType);
      if (copy?.enabled !== endpoint!.enabled || copy.filter !== endpoint!.filter)
        ops.push({ eventType, kind: 'put', enabled: endpoint!.enabled });
    }
    try {
      for (let i = 0; i < ops.length; i += MAX_TRANSACTION_ITEMS - 1) {
        const chunk = ops.slice(i, i + MAX_TRANSACTION_ITEMS - 1);
        await table.doc.send(
          new TransactWriteCommand({
            TransactItems: [
              endpointStillIs(table, slug, endpointId, endpoint),
              ...subscriptionWrites(table, slug, endpointId, chunk, endpoint?.filter ?? null),
            ],
          }),
        );
      }
      return;
    } catch (e) {
      if (!conditionFailedAt(e, 0) || tries >= RECONCILE_TRIES) throw e;
      endpoint = await readEndpointView(table, slug, endpointId);
      items = await subscriptionItemsOf(table, slug, endpointId);
    }
  }
}

/**
 * Rewrites the `enabled` and filter copies of one endpoint's subscription items from its item (read
 * strongly consistent), conditional on the endpoint not changing meanwhile: for a write that changes
 * `enabled` on the endpoint item alone, such as the dispatcher's auto-disable, best effort after it
 * (docs/architecture.md#subscriptions). About one write unit per copy that differs; nothing when
 * the endpoint and its items are gone.
 */
export async function syncSubscriptionCopies(table: TableContext, slug: string, endpointId: string): Promise<void> {
  // The one-endpoint reconcile: it writes only the copies that differ, under the same condition.
  await reconcileEndpoint(
    table,
    slug,
    endpointId,
    await readEndpointView(table, slug, endpointId),
    await subscriptionItemsOf(table, slug, endpointId),
  );
}

/** Every subscription item of a workspace, by endpoint: event type → its copies. */
async function subscriptionItems(table: TableContext, slug: string): Promise<Map<string, Map<string, SubscriptionCopy>>> {
  const byEndpoint = new Map<string, Map<string, SubscriptionCopy>>();
  for await (const page of queryPages(table, {
    ...withExpressions(partitionQuery(keys.workspacePk(slug), { sk: { prefix: keys.subscriptionPrefix() } }), FILTER_NAME),
    ProjectionExpression: `${TABLE.sortKey}, enabled, #filter`,
    ConsistentRead: true,
  })) {
    for (const item of page.Items ?? []) {
      const { eventType, endpointId } = keys.subscriptionOfSk(str(item, TABLE.sortKey));
      const types = byEndpoint.get(endpointId) ?? new Map<string, SubscriptionCopy>();
      types.set(eventType, { enabled: item.enabled === true, filter: optStr(item, 'filter') });
      byEndpoint.set(endpointId, types);
    }
  }
  return byEndpoint;
}

async function subscriptionItemsOf(table: TableContext, slug: string, endpointId: string): Promise<Map<string, SubscriptionCopy>> {
  return (await subscriptionItems(table, slug)).get(endpointId) ?? new Map();
}

/**
 * Workspaces (per table) this container has seen exist. Safe to keep for the container's life:
 * a workspace is never deleted, so the answer cannot go stale.
 */
const knownWorkspaces = new Set<string>();
/** Past this many workspaces the set starts again (a bound on memory, not on correctness). */
const KNOWN_CACHE_MAX = 10_000;

/** True when the workspace item exists (strongly consistent). */
async function workspaceExists(table: TableContext, slug: string): Promise<boolean> {
  const out = await table.doc.send(
    new GetCommand({
      TableName: table.tableName,
      Key: keys.workspace(slug),
      ConsistentRead: true,
      ProjectionExpression: '#pk',
      ExpressionAttributeNames: { '#pk': TABLE.partitionKey },
    }),
  );
  return out.Item !== undefined;
}

/**
 * The publisher's lookup: its subscribers, or null when the workspace does not exist. The workspace
 * item is read only until this container has seen it.
 */
export async function findSubscribers(table: TableContext, slug: string, eventType: string): Promise<Subscriber[] | null> {
  const cacheKey = `${table.tableName}\u0000${slug}`;
  if (!knownWorkspaces.has(cacheKey)) {
    if (!(await workspaceExists(table, slug))) return null;
    if (knownWorkspaces.size >= KNOWN_CACHE_MAX) knownWorkspaces.clear();
    knownWorkspaces.add(cacheKey);
  }
  return subscribersOf(table, slug, eventType);
}
