/**
 * Every shape and call the console uses that the contract (./contract.ts) does not declare yet:
 * delivery `eventId` and `replays`, the log's `eventId` filter, notification acknowledgement and
 * its filter, the list of jobs, the overview's `deadLetteredUnreplayed24h` and the audit
 * entry's `actor` object. Each field is optional here and read through a helper that falls back
 * to what the API answers today, so the console works against either. Calls go through the
 * client's raw request path, the only place in the console that does.
 */
import type { AuditEvent, Delivery, DeliveryStatus, Job, JobStatus, Notification, Overview } from './contract';

/**
 * The client's raw request path (`ApiClient.request` of ./client.ts), as a shape: this file stays
 * free of the browser's globals, so the readers below are unit-tested under Node.
 */
interface ApiClient {
  request(
    method: string,
    template: string,
    input?: { params?: Record<string, string>; query?: Record<string, string | number | undefined>; body?: unknown },
  ): Promise<unknown>;
}

/** One replay of a delivery, as its source lists it (`replays`, newest first). */
export interface ReplayLink {
  readonly deliveryId: string;
  readonly status: DeliveryStatus;
  readonly createdAt: string;
}

type DeliveryExtra = Delivery & { readonly eventId?: unknown; readonly replays?: unknown };
type NotificationExtra = Notification & { readonly acknowledgedAt?: unknown };
type OverviewExtra = Overview & { readonly deadLetteredUnreplayed24h?: unknown };
type AuditExtra = Omit<AuditEvent, 'actor'> & { readonly actor: unknown; readonly actorId?: unknown };

/** The EventBridge event id a delivery came from (a replay keeps its source's), or null when the API does not say. */
export function eventIdOf(delivery: Delivery): string | null {
  const { eventId } = delivery as DeliveryExtra;
  return typeof eventId === 'string' && eventId ? eventId : null;
}

/** The delivery's replays, newest first, or null when the API does not list them. */
export function replaysOf(delivery: Delivery): readonly ReplayLink[] | null {
  const { replays } = delivery as DeliveryExtra;
  if (!Array.isArray(replays)) return null;
  return replays.filter(
    (r): r is ReplayLink =>
      typeof r === 'object' &&
      r !== null &&
      typeof (r as ReplayLink).deliveryId === 'string' &&
      typeof (r as ReplayLink).status === 'string',
  );
}

/** When the notification was acknowledged; null when it was not (or the API does not say). */
export function acknowledgedAtOf(notification: Notification): string | null {
  const { acknowledgedAt } = notification as NotificationExtra;
  return typeof acknowledgedAt === 'string' ? acknowledgedAt : null;
}

/**
 * Dead letters of the last 24 h that still need a replay: `deadLetteredUnreplayed24h`, or every
 * dead letter of the window when the API does not count replayed ones apart.
 */
export function deadLettersNeedingAction(overview: Overview): number {
  const { deadLetteredUnreplayed24h } = overview as OverviewExtra;
  return typeof deadLetteredUnreplayed24h === 'number' ? deadLetteredUnreplayed24h : overview.deliveries24h.deadLettered;
}

/** Who made an audited change. */
export interface AuditActor {
  readonly kind: 'token' | 'portal_session' | 'staff' | 'system';
  readonly id: string;
  readonly name?: string;
  readonly email?: string;
}

/** The audit entry's actor as an object, from `actor` (object) or today's string `actor`. */
export function actorOf(event: AuditEvent): AuditActor {
  const { actor, actorId } = event as AuditExtra;
  if (typeof actor === 'object' && actor !== null && typeof (actor as AuditActor).id === 'string') {
    const a = actor as AuditActor;
    return {
      kind: a.kind,
      id: a.id,
      ...(typeof a.name === 'string' ? { name: a.name } : {}),
      ...(typeof a.email === 'string' ? { email: a.email } : {}),
    };
  }
  const id = typeof actorId === 'string' ? actorId : typeof actor === 'string' ? actor : '';
  return id === 'system' ? { kind: 'system', id } : { kind: 'token', id };
}

/**
 * The workspace's deliveries of one event (the log's `eventId` filter), newest first. Only the
 * deliveries that say they belong to the event are kept, so an API that ignores the filter
 * answers none rather than the whole log.
 */
export async function listDeliveriesOfEvent(client: ApiClient, eventId: string, limit = 50): Promise<Delivery[]> {
  const page = (await client.request('GET', '/workspaces/{slug}/deliveries', { query: { eventId, limit } })) as { items?: Delivery[] };
  return (page.items ?? []).filter((d) => eventIdOf(d) === eventId);
}

/** A page of the workspace's jobs, newest first (`GET /workspaces/{slug}/jobs`). */
export async function listJobs(
  client: ApiClient,
  query: { status?: JobStatus; limit?: number; cursor?: string } = {},
): Promise<{ items: Job[]; nextCursor: string | null }> {
  const page = (await client.request('GET', '/workspaces/{slug}/jobs', { query })) as { items?: Job[]; nextCursor?: string | null };
  return { items: page.items ?? [], nextCursor: page.nextCursor ?? null };
}

/** Which notifications a list asks for: all, only acknowledged, or only not acknowledged. */
export type AcknowledgedFilter = 'all' | 'acknowledged' | 'unacknowledged';

/**
 * A page of notifications with the `acknowledged` filter (sent only when it narrows the list; the
 * page is narrowed here too, so an API that ignores the filter still answers what was asked).
 */
export async function listNotificationsFiltered(
  client: ApiClient,
  query: { acknowledged: AcknowledgedFilter; limit?: number; cursor?: string },
): Promise<{ items: Notification[]; nextCursor: string | null }> {
  const { acknowledged, ...rest } = query;
  const page = (await client.request('GET', '/workspaces/{slug}/notifications', {
    query: { ...rest, acknowledged: acknowledged === 'all' ? undefined : String(acknowledged === 'acknowledged') },
  })) as { items?: Notification[]; nextCursor?: string | null };
  const items = (page.items ?? []).filter(
    (n) => acknowledged === 'all' || (acknowledgedAtOf(n) !== null) === (acknowledged === 'acknowledged'),
  );
  return { items, nextCursor: page.nextCursor ?? null };
}

/** Acknowledges a notification (`POST …/notifications/{notificationId}/ack`); answers it with `acknowledgedAt`. */
export async function ackNotification(client: ApiClient, notificationId: string): Promise<Notification> {
  return (await client.request('POST', '/workspaces/{slug}/notifications/{notificationId}/ack', {
    params: { notificationId },
  })) as Notification;
}
