/**
 * Subscription items (docs/architecture.md#subscriptions): one small item per (endpoint, subscribed
 * event type) in the workspace's partition, `SUB#<eventType>#<endpointId>`, holding a copy of the
 * endpoint's `enabled` flag and nothing else (the endpoint id is the sort key's last part). The publisher reads the subscribers of an event's type with one
 * Query of these items, so its cost follows the subscribers of the type, not the workspace's
 * endpoints (an endpoint item is about 1 KB; a subscription item about 100 bytes).
 *
 * They are written in the endpoint's own transactions (lambdas/store/endpoints.ts), planned by
 * `planSubscriptionSteps` (lambdas/domain/subscription-plan.ts). Workspaces whose endpoints were written before these items existed
 * are brought in step by {@link reconcileSubscriptions}, run by the publisher on the workspace's
 * first event (see {@link findSubscribers}).
 */
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { LaneState } from '../domain/delivery-lanes';
import { MAX_TRANSACTION_ITEMS, type SubscriptionOp, type SubscriptionState } from '../domain/subscription-plan';
import type { TableContext } from './client';
import type { TransactItem } from './audit';
import { conditionFailedAt, queryPages } from './table-io';
import { keys, SK_PREFIX, TABLE } from './table-schema';
import { workspaceRegistryKeys } from './workspace-registry';

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
  /** The endpoint's lane state, when the lookup read the endpoint item (the upgrade path); else absent: the fast lane. */
  readonly lane?: LaneState;
}

/** The subscribers of `eventType` in a workspace, from its subscription items: one Query of small items. */
export async function subscribersOf(table: TableContext, slug: string, eventType: string): Promise<Subscriber[]> {
  const out: Subscriber[] = [];
  for await (const page of queryPages(table, {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.workspacePk(slug), ':prefix': keys.subscriptionPrefix(eventType) },
    ProjectionExpression: 'sk, enabled',
  })) {
    for (const item of page.Items ?? [])
      out.push({ endpointId: keys.subscriptionOfSk(item.sk as string).endpointId, enabled: item.enabled === true });
  }
  return out;
}

/**
 * How long after a workspace's first reconcile a second one runs
 * (docs/architecture.md#subscriptions): while a stack update replaces the functions, the previous
 * release may still create or change an endpoint without its subscription items; the second
 * reconcile, once every function runs this release, repairs that.
 */
export const SUBSCRIPTIONS_SETTLE_MINUTES = 15;

/** Attributes of the workspace item that say where its subscription items stand. */
const MARKER = {
  /** When the first reconcile wrote the workspace's subscription items (ISO 8601). */
  writtenAt: 'subscriptionsWrittenAt',
  /** True once no write of an earlier release can be missing: a second reconcile ran, or the workspace was created by this release. */
  settled: 'subscriptionsSettled',
} as const;

/** The marker attributes of a workspace created by this release: its subscription items are complete from the start. */
export function newWorkspaceSubscriptionMarker(now: Date): Record<string, unknown> {
  return { [MARKER.writtenAt]: now.toISOString(), [MARKER.settled]: true };
}

/** Where a workspace's subscription items stand, read from its workspace item (strongly consistent). */
type MarkerState = { kind: 'absent' } | { kind: 'unwritten' } | { kind: 'written'; at: string } | { kind: 'settled' };

async function readMarker(table: TableContext, slug: string): Promise<MarkerState> {
  const out = await table.doc.send(
    new GetCommand({
      TableName: table.tableName,
      Key: keys.workspace(slug),
      ConsistentRead: true,
      ProjectionExpression: '#pk, #w, #s',
      ExpressionAttributeNames: { '#pk': 'pk', '#w': MARKER.writtenAt, '#s': MARKER.settled },
    }),
  );
  if (!out.Item) return { kind: 'absent' };
  if (out.Item[MARKER.settled] === true) return { kind: 'settled' };
  const at: unknown = out.Item[MARKER.writtenAt];
  return typeof at === 'string' ? { kind: 'written', at } : { kind: 'unwritten' };
}

async function writeMarker(table: TableContext, slug: string, now: Date, settled: boolean): Promise<void> {
  const registry = workspaceRegistryKeys(slug);
  await table.doc.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: keys.workspace(slug),
      // A workspace created before the registry joins it here, on its first event after the upgrade (docs/architecture.md#retention).
      UpdateExpression: `${settled ? 'SET #s = :true' : 'SET #w = if_not_exists(#w, :now)'}, #rpk = :rpk, #rsk = :rsk`,
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: {
        ...(settled ? { '#s': MARKER.settled } : { '#w': MARKER.writtenAt }),
        '#rpk': TABLE.gsi1.partitionKey,
        '#rsk': TABLE.gsi1.sortKey,
      },
      ExpressionAttributeValues: {
        ...(settled ? { ':true': true } : { ':now': now.toISOString() }),
        ':rpk': registry[TABLE.gsi1.partitionKey],
        ':rsk': registry[TABLE.gsi1.sortKey],
      },
    }),
  );
}

/** An endpoint as the reconcile and the upgrade path read it: what its subscriptions and its lane need. */
interface EndpointView extends SubscriptionState {
  readonly endpointId: string;
  readonly lane: LaneState;
}

function endpointView(item: Record<string, unknown>): EndpointView {
  return {
    endpointId: item.endpointId as string,
    eventTypes: (item.eventTypes as string[] | undefined) ?? [],
    enabled: item.enabled === true,
    lane: {
      consecutiveFailures: (item.consecutiveFailures as number | undefined) ?? 0,
      slowUntil: (item.slowUntil as string | null | undefined) ?? null,
    },
  };
}

const VIEW = { ProjectionExpression: 'endpointId, eventTypes, enabled, consecutiveFailures, slowUntil' } as const;

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
          ConditionExpression: 'attribute_exists(pk) AND eventTypes = :types AND enabled = :enabled',
          ExpressionAttributeValues: { ':types': state.eventTypes, ':enabled': state.enabled },
        },
      }
    : { ConditionCheck: { TableName: table.tableName, Key, ConditionExpression: 'attribute_not_exists(pk)' } };
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
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.workspacePk(slug), ':prefix': keys.subscriptionPrefix() },
    ProjectionExpression: 'sk, enabled',
    ConsistentRead: true,
  })) {
    for (const item of page.Items ?? []) {
      const { eventType, endpointId } = keys.subscriptionOfSk(item.sk as string);
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

/** Every endpoint of a workspace (strongly consistent): the reconcile's, and the upgrade path's, view. */
async function endpointsOf(table: TableContext, slug: string): Promise<EndpointView[]> {
  const out: EndpointView[] = [];
  for await (const page of queryPages(table, {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.workspacePk(slug), ':prefix': SK_PREFIX.endpoint },
    ConsistentRead: true,
    ...VIEW,
  })) {
    out.push(...(page.Items ?? []).map(endpointView));
  }
  return out;
}

/**
 * Makes a workspace's subscription items match its endpoint items (docs/architecture.md#subscriptions):
 * idempotent, safe beside concurrent endpoint writes. Returns the endpoints it read.
 */
export async function reconcileSubscriptions(table: TableContext, slug: string): Promise<EndpointView[]> {
  const [endpoints, items] = await Promise.all([endpointsOf(table, slug), subscriptionItems(table, slug)]);
  const seen = new Map(endpoints.map((e) => [e.endpointId, e]));
  for (const endpointId of new Set([...seen.keys(), ...items.keys()])) {
    await reconcileEndpoint(table, slug, endpointId, seen.get(endpointId) ?? null, items.get(endpointId) ?? new Map());
  }
  return endpoints;
}

/**
 * Workspaces (per table) this container has seen settled. Safe to keep for the container's life:
 * a workspace is never deleted and its marker is never cleared, so neither answer can go stale.
 */
const settledWorkspaces = new Set<string>();
/** Past this many workspaces the set starts again (a bound on memory, not on correctness). */
const SETTLED_CACHE_MAX = 10_000;

/** The publisher's lookup: its subscribers, or null when the workspace does not exist. */
export async function findSubscribers(table: TableContext, slug: string, eventType: string, now: Date): Promise<Subscriber[] | null> {
  const cacheKey = `${table.tableName}\u0000${slug}`;
  if (settledWorkspaces.has(cacheKey)) return subscribersOf(table, slug, eventType);
  const marker = await readMarker(table, slug);
  switch (marker.kind) {
    case 'absent':
      return null;
    case 'settled':
      if (settledWorkspaces.size >= SETTLED_CACHE_MAX) settledWorkspaces.clear();
      settledWorkspaces.add(cacheKey);
      return subscribersOf(table, slug, eventType);
    case 'written':
      if (now.getTime() - Date.parse(marker.at) < SUBSCRIPTIONS_SETTLE_MINUTES * 60_000) return subscribersOf(table, slug, eventType);
      await reconcileSubscriptions(table, slug);
      await writeMarker(table, slug, now, true);
      return subscribersOf(table, slug, eventType);
    case 'unwritten': {
      // The upgrade path: this event is fanned out from the endpoint items as before, once.
      const endpoints = await reconcileSubscriptions(table, slug);
      await writeMarker(table, slug, now, false);
      return endpoints
        .filter((e) => e.eventTypes.includes(eventType))
        .map((e) => ({ endpointId: e.endpointId, enabled: e.enabled, lane: e.lane }));
    }
  }
}
