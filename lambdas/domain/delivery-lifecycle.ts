/**
 * The life of a delivery, in one place (docs/behaviour.md#delivery-statuses):
 * which statuses are open, terminal and replayable, how an attempt's outcome is
 * classified, how it moves the endpoint's failure streak (and when that
 * disables the endpoint), how a new pending delivery and a bookkeeping entry
 * look, and how many times the queue hands a message over. Pure: the store
 * writes the conditions, the dispatcher does the I/O.
 */
import { INVALID_STATUS, PROTOCOL_UPGRADE } from '../contract/delivery-statuses';
import type { Attempt, Delivery, DeliveryStatus } from '../contract/schemas';
import { MAX_RETRIES } from './backoff';
import { newId } from './ids';
import { DISABLE_THRESHOLD } from '../contract/limits';

/** A delivery summary as stored: the wire form plus its workspace and evidence count. */
export interface DeliveryRecord extends Delivery {
  readonly workspace: string;
  /** Evidence entries so far (HTTP attempts and bookkeeping); the next ordinal is this + 1. */
  readonly evidenceCount: number;
}

/** Statuses a dispatch can still move a delivery out of. */
export const OPEN_STATUSES = ['pending', 'failed'] as const satisfies readonly DeliveryStatus[];

/** Statuses a replay may start from. */
export const REPLAYABLE_STATUSES = ['failed', 'failed_permanent', 'dead_lettered'] as const satisfies readonly DeliveryStatus[];

/** True for a status no dispatch changes (delivered, failed_permanent, dead_lettered). */
export function isTerminal(status: DeliveryStatus): boolean {
  return !(OPEN_STATUSES as readonly DeliveryStatus[]).includes(status);
}

/** True for a status a replay may start from. */
export function isReplayable(status: DeliveryStatus): boolean {
  return (REPLAYABLE_STATUSES as readonly DeliveryStatus[]).includes(status);
}

// Consecutive failures that disable an endpoint: a published number (the console states it too),
// so its home is the contract's limits.
export { DISABLE_THRESHOLD };

/** Every way an observation can move the endpoint's consecutive-failure streak. */
export const STREAK_CHANGES = ['none', 'reset', 'increment'] as const;
/** How an observation moves the endpoint's consecutive-failure streak. */
export type StreakChange = (typeof STREAK_CHANGES)[number];

/**
 * What one POST observed, as far as classification is concerned: a response (its status as the
 * receiver sent it, and whether it switched protocols), or an error without one.
 */
export type HttpOutcome =
  { readonly kind: 'response'; readonly status: number; readonly upgrade?: boolean } | { readonly kind: 'error'; readonly reason: string };

/** An attempt's classification: the status it leads to, its streak change and its failure reason. */
export interface Classified {
  readonly status: 'delivered' | 'failed' | 'failed_permanent';
  readonly streak: StreakChange;
  readonly reason: string | null;
}

/**
 * Prefix of the failure reasons that are the service's own fault, not the receiver's
 * (docs/behaviour.md#service-faults): out of file descriptors or sockets, our DNS resolver failing
 * or not answering in time. Such an attempt is retried like a network error but never moves the
 * endpoint's streak, so one tenant exhausting a container cannot disable another tenant's endpoint.
 */
const SERVICE_FAULT = 'service_error';

/** The failure reason of a service fault: `service_error: <cause>` (a short code, never a resolver's answer). */
export function serviceFaultReason(cause: string): string {
  return `${SERVICE_FAULT}: ${cause}`;
}

/** True when a failure reason names the service's own fault (see {@link SERVICE_FAULT}). */
export function isServiceFault(reason: string | null): boolean {
  return reason === SERVICE_FAULT || (reason?.startsWith(`${SERVICE_FAULT}:`) ?? false);
}

/**
 * Why a delivery was refused at dispatch because its host resolved to an address that is not
 * public. Deliberately generic: evidence is tenant-visible and must not say what the service's
 * resolver answers (the name and address are logged instead).
 */
export const DESTINATION_NOT_PUBLIC = 'destination_not_public';

/** A status in the range HTTP defines (100–599); anything else is the receiver's protocol error. */
export function isHttpStatus(status: number): boolean {
  return Number.isInteger(status) && status >= 100 && status <= 599;
}

/**
 * 2xx delivered; 5xx (500–599), 408, 429, network error and timeout retried; a protocol switch
 * (`protocol_upgrade`), a status outside 100–599 (`invalid_status`) and any other status (3xx
 * included) permanent. Every failure moves the streak except a service fault (retried, streak unchanged).
 */
export function classify(outcome: HttpOutcome): Classified {
  if (outcome.kind === 'error')
    return { status: 'failed', streak: isServiceFault(outcome.reason) ? 'none' : 'increment', reason: outcome.reason };
  const s = outcome.status;
  if (outcome.upgrade || s === 101) return { status: 'failed_permanent', streak: 'increment', reason: PROTOCOL_UPGRADE };
  if (!isHttpStatus(s)) return { status: 'failed_permanent', streak: 'increment', reason: INVALID_STATUS };
  if (s >= 200 && s < 300) return { status: 'delivered', streak: 'reset', reason: null };
  if (s >= 500 || s === 408 || s === 429) return { status: 'failed', streak: 'increment', reason: `http_${s}` };
  return { status: 'failed_permanent', streak: 'increment', reason: s >= 300 && s < 400 ? `redirect_not_followed_${s}` : `http_${s}` };
}

/** A URL refused at dispatch: a permanent failure that counts in the streak like any other. */
export function refusedAtDispatch(reason: string): Classified {
  return { status: 'failed_permanent', streak: 'increment', reason };
}

/**
 * True when a retryable failure on attempt `attempts` has no next attempt: the retries are spent.
 * Only attempts spend them (docs/behaviour.md#delivery-lanes): how often the queue handed the
 * message over (deferrals, failed re-sends, crashed invocations) never does. A retry due on the
 * queue's last receive rides on a new message instead (lambdas/functions/dispatcher.ts).
 */
export function retriesExhausted(attempts: number): boolean {
  return attempts > MAX_RETRIES;
}

/**
 * True for a delivery whose retries are spent and that the dead-letter consumer has not marked
 * yet: `failed` with no next attempt. Nothing attempts it again; it goes to the dead-letter queue.
 */
export function awaitsDeadLetter(delivery: Pick<DeliveryRecord, 'status' | 'nextAttemptAt'>): boolean {
  return delivery.status === 'failed' && delivery.nextAttemptAt === null;
}

/** Why the dead-letter consumer marks a delivery: its 7 attempts failed (bookkeeping reason). */
export const RETRIES_EXHAUSTED = 'retries_exhausted';

/**
 * Why the dead-letter consumer marks a delivery that still had retries: the queue gave its message
 * up (after `MAX_RECEIVES` receives (contract/deployment.ts)) more than {@link MAX_REQUEUES} times, so something keeps
 * failing before any attempt is recorded (a poison message that kills the dispatcher).
 */
export const QUEUE_RECEIVES_EXHAUSTED = 'queue_receives_exhausted';

/**
 * Times the dead-letter consumer sends a delivery that still has retries back to the delivery
 * queue (counted in its message, docs/architecture.md#queue-messages) before it marks it anyway:
 * what keeps a message that always kills its dispatcher from circling forever.
 */
export const MAX_REQUEUES = 3;

/**
 * What the dead-letter consumer does with an open delivery whose message reached the dead-letter
 * queue after `requeues` earlier requeues (docs/behaviour.md#dead-lettering): mark it when its
 * retries are spent ({@link RETRIES_EXHAUSTED}); else the queue gave it up (receives, not attempts),
 * so send it back, at most {@link MAX_REQUEUES} times, then mark it ({@link QUEUE_RECEIVES_EXHAUSTED}).
 */
export function deadLetterVerdict(
  delivery: Pick<DeliveryRecord, 'status' | 'nextAttemptAt' | 'attempts'>,
  requeues: number,
): { readonly kind: 'mark'; readonly reason: string } | { readonly kind: 'requeue' } {
  if (awaitsDeadLetter(delivery) || retriesExhausted(delivery.attempts)) return { kind: 'mark', reason: RETRIES_EXHAUSTED };
  return requeues < MAX_REQUEUES ? { kind: 'requeue' } : { kind: 'mark', reason: QUEUE_RECEIVES_EXHAUSTED };
}

/** The streak an endpoint had when the attempt was read. */
export interface StreakState {
  readonly enabled: boolean;
  readonly consecutiveFailures: number;
}

/**
 * The streak after `change`, and whether it disables the endpoint; null when
 * nothing is to be written (no change, or a reset of a streak already at 0).
 * Only an enabled endpoint is disabled, so an operator's re-enable stands.
 */
export function nextStreak(endpoint: StreakState, change: StreakChange): { consecutiveFailures: number; disables: boolean } | null {
  if (change === 'none') return null;
  if (change === 'reset') return endpoint.consecutiveFailures === 0 ? null : { consecutiveFailures: 0, disables: false };
  const consecutiveFailures = endpoint.consecutiveFailures + 1;
  return { consecutiveFailures, disables: endpoint.enabled && consecutiveFailures >= DISABLE_THRESHOLD };
}

/** What a new pending delivery is made of. */
export interface NewDelivery {
  readonly workspace: string;
  readonly endpointId: string;
  readonly eventType: string;
  readonly payload: unknown;
  /** The source of a replay; null otherwise. */
  readonly replayedFrom?: string | null;
  /** The event it carries (the publisher's event id; a replay's source's; a test send's own). */
  readonly eventId?: string | null;
}

/** A new `pending` summary with no attempt yet, due now (publisher, replay and test send alike). */
export function newPendingDelivery(input: NewDelivery, now: Date): DeliveryRecord {
  const iso = now.toISOString();
  return {
    deliveryId: newId('whd', now),
    workspace: input.workspace,
    endpointId: input.endpointId,
    status: 'pending',
    attempts: 0,
    evidenceCount: 0,
    nextAttemptAt: iso,
    eventType: input.eventType,
    eventId: input.eventId ?? null,
    payload: input.payload,
    replayedFrom: input.replayedFrom ?? null,
    lastResponseStatus: null,
    lastError: null,
    createdAt: iso,
    updatedAt: iso,
  };
}

/** Why a delivery was never sent because its endpoint was disabled (bookkeeping and held deliveries). */
export const ENDPOINT_DISABLED = 'endpoint_disabled';

/**
 * A held delivery (docs/behaviour.md#held-deliveries): an event published while
 * its endpoint was disabled, recorded as `failed_permanent` with no attempt and
 * never queued, so a replay or a recovery job can send it once the endpoint is back.
 */
export function newHeldDelivery(input: NewDelivery, now: Date): DeliveryRecord {
  return { ...newPendingDelivery(input, now), status: 'failed_permanent', nextAttemptAt: null, lastError: ENDPOINT_DISABLED };
}

/** An evidence entry that is not an HTTP attempt: no duration, no request, no response. */
export function bookkeepingEntry(now: Date, outcome: 'failed_permanent' | 'dead_lettered', reason: string): Omit<Attempt, 'ordinal'> {
  return {
    outcome,
    timestamp: now.toISOString(),
    durationMs: null,
    failureReason: reason,
    requestHeaders: {},
    responseStatus: null,
    responseBody: null,
  };
}
