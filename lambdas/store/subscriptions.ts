/**
 * Subscription items (docs/architecture.md#subscriptions): one small item per (endpoint, subscribed
 * event type) in the workspace's partition, `SUB#<eventType>#<endpointId>`, holding a copy of the
 * endpoint's `enabled` flag and nothing else (the endpoint id is the sort key's last part). The publisher reads the subscribers of an event's type with one
 * Query of these items, so its cost follows the subscribers of the type, not the workspace's
 * endpoints (an endpoint item is about 1 KB; a subscription item about 100 bytes).
 *
 * They are written in the endpoint's own transactions (lambdas/store/endpoints.ts), planned by
 * `planSubscriptionSteps` (lambdas/domain/subscription-plan.ts); a write of the endpoint item alone
 * (the dispatcher's auto-disable) is followed by {@link syncSubscriptionCopies}.
 */
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { MAX_TRANSACTION_ITEMS, type SubscriptionOp, type SubscriptionState } from '../domain/subscription-plan';
import type { TableContext } from './client';
import type { TransactItem } from './audit';
import { conditionFailedAt, IF_ABSENT, ifExistsAnd, partitionQuery, queryPages, str, strList, type Item } from './table-io';
import { keys, TABLE } from './table-schema';

/** The transaction items of `ops` for one endpoint. */
export function subscriptionWrites(table: TableContext, slug: string, endpointId: string, ops: readonly SubscriptionOp[]): TransactItem[] {
  return ops.map((op) => {
    const key = keys.subscription(slug, op.eventType, endpointId);
    return op.kind === 'put'
      ? { Put: { TableName: table.tableName, Item: { ...key, type: 'subscription', enabled: op.enabled } } }
      : { Delete: { TableName: table.tableName, Key: key } };
  });
}

/** A subscriber of an event type, as the publisher fans out to it. */
export interface Subscriber {
  readonly endpointId: string;
  readonly enabled: boolean;
}

/** The subscribers of `eventType` in a workspace, from its subscription items: one Query of small items. */
async function subscribersOf(table: TableContext, slug: string, eventType: string): Promise<Subscriber[]> {
  const out: Subscriber[] = [];
  for await (const page of queryPages(table, {
    ...partitionQuery(keys.workspacePk(slug), { sk: { prefix: keys.subscriptionPrefix(eventType) } }),
    ProjectionExpression: `${TABLE.sortKey}, enabled`,
  })) {
    for (const item of page.Items ?? [])
      out.push({ endpointId: keys.subscriptionOfSk(str(item, TABLE.sortKey)).endpointId, enabled: item.enabled === true });
  }
  return out;
}

/** An endpoint as the reconcile reads it: what its subscriptions need. */
interface EndpointView extends SubscriptionState {
  readonly endpointId: string;
}

/** An endpoint item's projection as the reconcile's view, each attribute checked (absent event types: none; enabled only when true). */
function endpointView(item: Item): EndpointView {
  return {
    endpointId: str(item, 'endpointId'),
    eventTypes: strList(item, 'eventTypes'),
    enabled: item.enabled === true,
  };
}

const VIEW = { ProjectionExpression: 'endpointId, eventTypes, enabled' } as const;

async function readEndpointView(table: TableContext, slug: string, endpointId: string): Promise<EndpointView | null> {
  const out = await table.doc.send(
    new GetCommand({ TableName: table.tableName, Key: keys.endpoint(slug, endpointId), ConsistentRead: true, ...VIEW }),
  );
  return out.Item ? endpointView(out.Item) : null;
}

/** The condition that an endpoint is still in `state` (or, for null, gone): what a reconcile's writes were computed from. */
function endpointStillIs(table: TableContext, slug: string, endpointId: string, state: SubscriptionState | null): TransactItem {
  const Key = keys.endpoint(slug, endpointId);
  return state
    ? {
        ConditionCheck: {
          TableName: table.tableName,
          Key,
          ConditionExpression: ifExistsAnd('eventTypes = :types AND enabled = :enabled'),
          ExpressionAttributeValues: { ':types': state.eventTypes, ':enabled': state.enabled },
        },
      }
    : { ConditionCheck: { TableName: table.tableName, Key, ConditionExpression: IF_ABSENT } };
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
  existing: ReadonlyMap<string, boolean>,
): Promise<void> {
  let endpoint = seen;
  let items = existing;
  for (let tries = 1; ; tries++) {
    const ops: SubscriptionOp[] = [];
    const want = new Set(endpoint?.eventTypes ?? []);
    for (const [eventType] of items) if (!want.has(eventType)) ops.push({ eventType, kind: 'delete', enabled: false });
    for (const eventType of want) {
      if (items.get(eventType) !== endpoint!.enabled) ops.push({ eventType, kind: 'put', enabled: endpoint!.enabled });
    }
    try {
      for (let i = 0; i < ops.length; i += MAX_TRANSACTION_ITEMS - 1) {
        const chunk = ops.slice(i, i + MAX_TRANSACTION_ITEMS - 1);
        await table.doc.send(
          new TransactWriteCommand({
            TransactItems: [endpointStillIs(table, slug, endpointId, endpoint), ...subscriptionWrites(table, slug, endpointId, chunk)],
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
 * Rewrites the `enabled` copies of one endpoint's subscription items from its item (read strongly
 * consistent), conditional on the endpoint not changing meanwhile: for a write that changes
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

/** Every subscription item of a workspace, by endpoint: event type → enabled copy. */
async function subscriptionItems(table: TableContext, slug: string): Promise<Map<string, Map<string, boolean>>> {
  const byEndpoint = new Map<string, Map<string, boolean>>();
  for await (const page of queryPages(table, {
    ...partitionQuery(keys.workspacePk(slug), { sk: { prefix: keys.subscriptionPrefix() } }),
    ProjectionExpression: `${TABLE.sortKey}, enabled`,
    ConsistentRead: true,
  })) {
    for (const item of page.Items ?? []) {
      const { eventType, endpointId } = keys.subscriptionOfSk(str(item, TABLE.sortKey));
      const types = byEndpoint.get(endpointId) ?? new Map<string, boolean>();
      types.set(eventType, item.enabled === true);
      byEndpoint.set(endpointId, types);
    }
  }
  return byEndpoint;
}

async function subscriptionItemsOf(table: TableContext, slug: string, endpointId: string): Promise<Map<string, boolean>> {
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
