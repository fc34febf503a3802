/**
 * The dispatcher's work on one queued delivery (docs/architecture.md#dispatcher,
 * docs/behaviour.md#outbound-request): load, check, sign, POST, record, decide.
 * Pure of AWS: the queue's ack / retry is the caller's, from the result.
 */
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { nextAttemptAt, retryDelaySeconds } from '../domain/backoff';
import { laneOf, SLOW_LANE, slowMarkAfter, type LaneRole } from '../domain/delivery-lanes';
import {
  awaitsDeadLetter,
  bookkeepingEntry,
  classify,
  DESTINATION_NOT_PUBLIC,
  DISABLE_THRESHOLD,
  ENDPOINT_DISABLED,
  isServiceFault,
  isTerminal,
  refusedAtDispatch,
  retriesExhausted,
  serviceFaultReason,
  type Classified,
  type DeliveryRecord,
} from '../domain/delivery-lifecycle';
import { USER_AGENT } from '../contract/limits';
import type { HealthObservation } from '../domain/delivery-health';
import { activeSecrets, openSecrets, type SecretSealer } from '../domain/secrets';
import { signatureHeader } from '../domain/signing';
import { redactUrl } from '../domain/url-redaction';
import { checkWebhookUrl, isPublicAddress, type UrlCheckOptions } from '../domain/webhook-url';
import type { TableContext } from '../store/client';
import { readDelivery, recordObservation, type Observation, type UnappliedAttempt } from '../store/deliveries';
import { getEndpointRecord, markEndpointSlow, type EndpointRecord } from '../store/endpoints';
import { putNotification } from '../store/notifications';
import { syncSubscriptionCopies } from '../store/subscriptions';
import type { PinnedAddress, Sender, SendResult } from './http-sender';
import { createDnsResolver, DnsLookupError } from './dns-resolver';
import type { DomainEventSink } from '../queue/domain-events';

/**
 * Resolves a host name to its addresses; a failure is a {@link DnsLookupError} naming whose fault
 * it is (any other error counts as the service's own).
 */
export type Resolver = (hostname: string) => Promise<PinnedAddress[]>;

/** The production resolver: c-ares, A and AAAA, under its own short deadline (docs/behaviour.md#name-resolution). */
export const systemResolver: Resolver = createDnsResolver();

/** Where the dispatcher writes what evidence must not show (Powertools' logger fits). */
export interface DispatchLog {
  warn(message: string, attributes: Record<string, unknown>): void;
}

/** Adapters of the dispatcher. */
export interface DispatchDeps {
  readonly table: TableContext;
  readonly now: () => Date;
  readonly sender: Sender;
  readonly resolve: Resolver;
  readonly urlPolicy: UrlCheckOptions;
  /** Trace id of an attempt (`x-trace-id`). @default a random UUID */
  readonly traceId?: () => string;
  /** Domain events (`webhook.disabled`). @default none */
  readonly events?: DomainEventSink;
  /** The function's logger: refused addresses and service faults, in detail. @default none */
  readonly log?: DispatchLog;
  /**
   * Reads an endpoint for a dispatch: a batch passes one that reads each endpoint once per batch
   * (docs/architecture.md#dispatcher). @default a strongly consistent read per delivery
   */
  readonly endpoint?: (workspace: string, endpointId: string) => Promise<EndpointRecord | null>;
  /**
   * Opens the endpoint's sealed secrets (docs/architecture.md#secrets); the dispatcher is the one
   * function allowed to. @default none: only legacy plaintext secrets sign, a sealed one throws
   * (the message is received again)
   */
  readonly secrets?: SecretSealer;
}

/**
 * What the queue should do with the message, and what this dispatch recorded (absent when it
 * recorded nothing: a duplicate, a gone or terminal row), for the batch's health counts:
 * - `ack`: delete it;
 * - `retry`: receive it again in `delaySeconds` (the backoff), in the same lane;
 * - `move`: send it to the slow lane, due in `delaySeconds`, and delete this one
 *   (docs/behaviour.md#delivery-lanes): a move is no receive of the new message, so it uses up
 *   neither a retry nor a step toward the dead-letter queue;
 * - `dead_letter`: its retries are spent: send it to the dead-letter queue and delete this one.
 *
 * `disabled` is set when the attempt recorded disabled the endpoint (its failure streak reached the
 * threshold), for the auto-disable metric.
 */
export type DispatchResult =
  | { kind: 'ack'; reason: string; delivery?: DeliveryRecord; recorded?: HealthObservation; disabled?: true }
  | { kind: 'retry'; delaySeconds: number; delivery: DeliveryRecord; recorded?: HealthObservation; disabled?: true }
  | { kind: 'move'; delaySeconds: number; delivery: DeliveryRecord; recorded?: HealthObservation; disabled?: true }
  | { kind: 'dead_letter'; delivery: DeliveryRecord; recorded?: HealthObservation; disabled?: true };

/** The observation as health counts it (docs/behaviour.md#endpoint-health). */
function observed(
  delivery: DeliveryRecord,
  http: boolean,
  attempt: Omit<Observation['attempt'], 'requestHeaders' | 'responseBody'>,
): HealthObservation {
  return {
    workspace: delivery.workspace,
    endpointId: delivery.endpointId,
    http,
    outcome: attempt.outcome,
    timestamp: attempt.timestamp,
    durationMs: attempt.durationMs,
    responseStatus: attempt.responseStatus,
    failureReason: attempt.failureReason,
  };
}

/**
 * An endpoint reader for one batch (docs/architecture.md#dispatcher): each endpoint is read once,
 * strongly consistent, however many of the batch's deliveries go to it, so a busy endpoint costs a
 * read per batch, not per delivery. A batch is seconds long; a change during it is what a
 * concurrent batch would see anyway, and the streak's writes are conditional on what was read
 * (a concurrent change is re-read, never overwritten).
 */
export function endpointReaderForBatch(table: TableContext): (workspace: string, endpointId: string) => Promise<EndpointRecord | null> {
  const read = new Map<string, Promise<EndpointRecord | null>>();
  return (workspace, endpointId) => {
    const key = `${workspace}\u0000${endpointId}`;
    let found = read.get(key);
    if (!found) {
      found = getEndpointRecord(table, workspace, endpointId);
      // A failed read is not kept: the next delivery of the batch reads again.
      found.catch(() => read.delete(key));
      read.set(key, found);
    }
    return found;
  };
}

/** The address to pin and the time resolving it took, or why the attempt stops here. */
type AddressCheck =
  { ok: true; pinned: PinnedAddress; spentMs: number } | { ok: false; permanent: boolean; reason: string; spentMs: number };

/**
 * Resolves and checks the URL's host; the address to pin, or the reason it is refused / failed.
 * A refused address is stored as the generic {@link DESTINATION_NOT_PUBLIC} and logged in detail:
 * evidence is tenant-visible and must not tell what the service's resolver answers.
 */
async function checkedAddress(deps: DispatchDeps, url: URL, delivery: DeliveryRecord): Promise<AddressCheck> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const started = performance.now();
  const spent = () => Math.round(performance.now() - started);
  let addresses: PinnedAddress[];
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) === 6 ? 6 : 4 }];
  else {
    try {
      addresses = await deps.resolve(host);
    } catch (error) {
      const reason = error instanceof DnsLookupError ? error.reason : serviceFaultReason('dns_unavailable');
      if (isServiceFault(reason))
        deps.log?.warn('Name resolution failed on our side; the delivery is retried, its endpoint streak unchanged', {
          ...about(delivery),
          host,
          reason,
          error: String(error),
        });
      return { ok: false, permanent: false, reason, spentMs: spent() };
    }
  }
  if (addresses.length === 0) return { ok: false, permanent: false, reason: 'dns_failure', spentMs: spent() };
  const bad = addresses.find((a) => !isPublicAddress(a.address, deps.urlPolicy));
  if (bad) {
    deps.log?.warn('Delivery refused: its host resolves to an address that is not public', {
      ...about(delivery),
      host,
      address: bad.address,
      addresses: addresses.map((a) => a.address),
    });
    return { ok: false, permanent: true, reason: DESTINATION_NOT_PUBLIC, spentMs: spent() };
  }
  return { ok: true, pinned: addresses[0]!, spentMs: spent() };
}

/** The log attributes naming a delivery. */
function about(delivery: DeliveryRecord): Record<string, string> {
  return { deliveryId: delivery.deliveryId, workspace: delivery.workspace, endpointId: delivery.endpointId };
}

/**
 * Records an observation, re-reading the endpoint when a concurrent change moved its streak
 * (bounded): the attempt is then stored already, and only the state and streak are applied again.
 */
async function record(
  deps: DispatchDeps,
  delivery: DeliveryRecord,
  endpoint: EndpointRecord | null,
  build: (ep: EndpointRecord | null) => Omit<Observation, 'delivery' | 'endpoint'>,
  attemptWritten = false,
) {
  let ep = endpoint;
  let written = attemptWritten;
  for (let i = 0; i < 5; i++) {
    const outcome = await recordObservation(deps.table, { delivery, endpoint: ep, ...build(ep) }, deps.now(), { attemptWritten: written });
    if (outcome.kind !== 'endpoint_changed') return outcome;
    written = true;
    ep = await getEndpointRecord(deps.table, delivery.workspace, delivery.endpointId);
  }
  throw new Error(`endpoint ${delivery.endpointId} kept changing while recording ${delivery.deliveryId}`);
}

/** Whole seconds from `now` until `at` (ISO 8601), at least 0. */
function secondsUntil(at: string | null, now: Date): number {
  return at ? Math.max(0, Math.ceil((Date.parse(at) - now.getTime()) / 1000)) : 0;
}

/**
 * Dispatches one delivery. `_receiveCount` (the queue's count for the message) no longer decides
 * anything: only attempts spend retries (`retriesExhausted`). `lane` is the queue it came from
 * (docs/behaviour.md#delivery-lanes); `only` when the stage has no slow lane, and then nothing moves.
 */
export async function dispatchDelivery(
  deps: DispatchDeps,
  deliveryId: string,
  _receiveCount = 1,
  lane: LaneRole = 'only',
): Promise<DispatchResult> {
  const read = await readDelivery(deps.table, deliveryId);
  if (!read) return { kind: 'ack', reason: 'delivery_gone' };
  const delivery = read.record;
  const loadEndpoint = () =>
    (deps.endpoint ?? ((ws, id) => getEndpointRecord(deps.table, ws, id)))(delivery.workspace, delivery.endpointId);
  // An attempt was written but the receive that made it ended before the state caught up: complete it, no second POST.
  if (read.unapplied) return rollForward(deps, delivery, await loadEndpoint(), read.unapplied);
  if (isTerminal(delivery.status)) return { kind: 'ack', reason: 'already_terminal', delivery };
  // Spent, but not marked yet (its dead-letter send failed): never an eighth attempt.
  if (awaitsDeadLetter(delivery)) return { kind: 'dead_letter', delivery };
  const endpoint = await loadEndpoint();
  if (!endpoint) return { kind: 'ack', reason: 'endpoint_gone', delivery };
  const now = deps.now();

  if (!endpoint.enabled) {
    // Terminal bookkeeping: no HTTP attempt, no streak change; replayable once re-enabled.
    const entry = bookkeepingEntry(now, 'failed_permanent', ENDPOINT_DISABLED);
    const outcome = await record(deps, delivery, endpoint, () => ({
      attempt: entry,
      status: 'failed_permanent',
      http: false,
      nextAttemptAt: null,
      streak: 'none',
    }));
    return {
      kind: 'ack',
      reason: outcome.kind === 'recorded' ? ENDPOINT_DISABLED : 'duplicate',
      ...(outcome.kind === 'recorded' ? { delivery: outcome.delivery, recorded: observed(delivery, false, entry) } : {}),
    };
  }

  // A failing or slow endpoint's delivery waits in the slow lane, not in a fast batch.
  if (lane === 'fast' && laneOf(endpoint, now) === 'slow')
    return { kind: 'move', delaySeconds: secondsUntil(delivery.nextAttemptAt, now), delivery };

  // Dispatch-time URL check: the endpoint rules again, then every resolved address.
  const check = checkWebhookUrl(endpoint.url, deps.urlPolicy);
  const address = check.ok
    ? await checkedAddress(deps, check.url, delivery)
    : ({ ok: false, permanent: true, reason: `invalid_url: ${check.detail}`, spentMs: 0 } as const);

  // Before any attempt is recorded: a secret that cannot be opened is the service's fault, and the message comes back.
  const signingSecrets = await openSecrets(activeSecrets(endpoint.secrets, now), deps.secrets);
  const timestamp = Math.floor(now.getTime() / 1000);
  const body = JSON.stringify({ deliveryId: delivery.deliveryId, eventType: delivery.eventType, payload: delivery.payload });
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': delivery.deliveryId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(signingSecrets, delivery.deliveryId, timestamp, body),
    'x-trace-id': (deps.traceId ?? randomUUID)(),
  };

  let result: SendResult;
  let classified: Classified;
  let markedInFlight = false;
  if (!address.ok) {
    // A refusal sent nothing (duration 0, docs/behaviour.md#status-transitions); a failed resolution took its time.
    result = { kind: 'error', reason: address.reason, durationMs: address.permanent ? 0 : address.spentMs };
    classified = address.permanent ? refusedAtDispatch(address.reason) : classify(result);
  } else {
    // Resolution is part of the attempt's deadline: the POST gets what is left of it.
    const send = deps.sender({
      url: check.ok ? check.url : new URL(endpoint.url),
      headers,
      body,
      pinned: address.pinned,
      spentMs: address.spentMs,
    });
    result = lane === 'only' ? await send : await markedIfSlow(deps, endpoint, send, () => (markedInFlight = true));
    classified = classify(result);
    if (result.kind === 'error' && isServiceFault(result.reason)) {
      deps.log?.warn('Delivery attempt failed on our side; it is retried, its endpoint streak unchanged', {
        ...about(delivery),
        reason: result.reason,
      });
    }
  }

  const attempts = delivery.attempts + 1;
  const exhausted = classified.status === 'failed' && retriesExhausted(attempts);
  const finishedAt = deps.now();
  const attempt = {
    outcome: classified.status,
    timestamp: now.toISOString(),
    durationMs: result.durationMs,
    failureReason: classified.reason,
    requestHeaders: headers,
    responseStatus: result.kind === 'response' ? result.status : null,
    responseBody: result.kind === 'response' ? result.body : null,
  };
  const outcome = await record(deps, delivery, endpoint, () => ({
    attempt,
    status: classified.status,
    // A refused address counts as an attempt that failed before connecting.
    http: true,
    nextAttemptAt: classified.status === 'failed' && !exhausted ? nextAttemptAt(attempts, finishedAt).toISOString() : null,
    streak: classified.streak,
    disableAudit: {
      action: 'webhook.disabled',
      actor: 'system',
      detail: { consecutiveFailures: DISABLE_THRESHOLD, lastDeliveryId: delivery.deliveryId },
    },
  }));
  if (outcome.kind === 'duplicate') return afterDuplicate(deps, delivery.deliveryId);
  const recorded = observed(delivery, true, attempt);
  const marked = lane === 'only' ? false : markedInFlight || (await markSlow(deps, endpoint, result.durationMs, finishedAt));
  if (outcome.disabled) await announceDisabled(deps, endpoint, delivery, outcome.consecutiveFailures);
  const disabled = outcome.disabled ? ({ disabled: true } as const) : {};
  if (classified.status !== 'failed') return { kind: 'ack', reason: classified.status, delivery: outcome.delivery, recorded, ...disabled };
  if (exhausted) return { kind: 'dead_letter', delivery: outcome.delivery, recorded, ...disabled };
  const delaySeconds = retryDelaySeconds(attempts);
  // The retry of an endpoint that just failed (its streak moved) or was slow waits in the slow lane.
  if (lane === 'fast' && (classified.streak === 'increment' || marked))
    return { kind: 'move', delaySeconds, delivery: outcome.delivery, recorded, ...disabled };
  return { kind: 'retry', delaySeconds, delivery: outcome.delivery, recorded, ...disabled };
}

/** After an auto-disable, best effort: the subscription copies, a notification and a domain event (docs/behaviour.md#notifications). */
async function announceDisabled(
  deps: DispatchDeps,
  endpoint: EndpointRecord,
  delivery: DeliveryRecord,
  consecutiveFailures: number | null,
): Promise<void> {
  // The publisher's copies of `enabled` (docs/architecture.md#subscriptions): from now on its events are held, not queued.
  await syncSubscriptionCopies(deps.table, endpoint.workspace, endpoint.endpointId).catch(() => undefined);
  await putNotification(
    deps.table,
    delivery.workspace,
    {
      kind: 'endpoint.disabled',
      message: `Webhook endpoint ${redactUrl(endpoint.url)} was disabled after ${consecutiveFailures} consecutive failed deliveries. Fix the receiver, re-enable it, then replay the failed deliveries.`,
      endpointId: endpoint.endpointId,
      deliveryId: delivery.deliveryId,
    },
    deps.now(),
  ).catch(() => undefined);
  await deps.events
    ?.emit(delivery.workspace, 'webhook.disabled', {
      endpointId: endpoint.endpointId,
      url: redactUrl(endpoint.url),
      consecutiveFailures: consecutiveFailures ?? DISABLE_THRESHOLD,
    })
    .catch(() => undefined);
}

/**
 * Completes an attempt whose state never caught up (docs/architecture.md#delivery-items): applies
 * the effect stored on it, with the endpoint's streak as it is now, then does what the receive
 * that made it would have done: ack a final status, or schedule the retry it decided (in the lane
 * this message came from). Nothing is sent to the receiver again.
 */
async function rollForward(
  deps: DispatchDeps,
  delivery: DeliveryRecord,
  endpoint: EndpointRecord | null,
  unapplied: UnappliedAttempt,
): Promise<DispatchResult> {
  const { attempt, applies } = unapplied;
  const { ordinal: _ordinal, ...evidence } = attempt;
  const outcome = await record(
    deps,
    delivery,
    endpoint,
    () => ({
      attempt: evidence,
      ...applies,
      disableAudit: {
        action: 'webhook.disabled',
        actor: 'system',
        detail: { consecutiveFailures: DISABLE_THRESHOLD, lastDeliveryId: delivery.deliveryId },
      },
    }),
    true,
  );
  if (outcome.kind === 'duplicate') return afterDuplicate(deps, delivery.deliveryId);
  if (outcome.disabled && endpoint) await announceDisabled(deps, endpoint, delivery, outcome.consecutiveFailures);
  const recorded = observed(delivery, applies.http, attempt);
  const disabled = outcome.disabled ? ({ disabled: true } as const) : {};
  if (applies.status !== 'failed') return { kind: 'ack', reason: applies.status, delivery: outcome.delivery, recorded, ...disabled };
  if (applies.nextAttemptAt === null) return { kind: 'dead_letter', delivery: outcome.delivery, recorded, ...disabled };
  return {
    kind: 'retry',
    delaySeconds: secondsUntil(applies.nextAttemptAt, deps.now()),
    delivery: outcome.delivery,
    recorded,
    ...disabled,
  };
}

/**
 * Waits for a POST; if it is still running after {@link SLOW_LANE.slowAttemptMs}, marks the endpoint
 * slow right then (docs/behaviour.md#delivery-lanes), so the endpoint's next deliveries are queued
 * in, or moved to, the slow lane while this one still waits: a receiver that turns into a black
 * hole holds a fast batch for one deadline, not for every delivery published meanwhile.
 */
async function markedIfSlow(
  deps: DispatchDeps,
  endpoint: EndpointRecord,
  send: Promise<SendResult>,
  onMarked: () => void,
): Promise<SendResult> {
  const timer = setTimeout(() => {
    void markSlow(deps, endpoint, SLOW_LANE.slowAttemptMs, deps.now()).then((marked) => marked && onMarked());
  }, SLOW_LANE.slowAttemptMs);
  try {
    return await send;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Marks the endpoint slow after a slow attempt (docs/behaviour.md#delivery-lanes); true when it
 * is marked now. Best effort: a lost mark only leaves the endpoint in the fast lane a while longer.
 */
async function markSlow(deps: DispatchDeps, endpoint: EndpointRecord, durationMs: number | null, now: Date): Promise<boolean> {
  const until = slowMarkAfter(endpoint, durationMs, now);
  if (!until) return false;
  try {
    await markEndpointSlow(deps.table, endpoint.workspace, endpoint.endpointId, until);
  } catch (error) {
    deps.log?.warn('Could not mark a slow endpoint; it stays in the fast lane until its next slow attempt', {
      workspace: endpoint.workspace,
      endpointId: endpoint.endpointId,
      error: String(error),
    });
  }
  return true;
}

/**
 * Another receive of the same message recorded first. Ack only if that left
 * the delivery terminal; if it is still open, keep the message for its next
 * attempt, so a duplicate can never delete a retry.
 */
async function afterDuplicate(deps: DispatchDeps, deliveryId: string): Promise<DispatchResult> {
  const read = await readDelivery(deps.table, deliveryId);
  const current = read?.record;
  if (!current) return { kind: 'ack', reason: 'duplicate' };
  // The receive that won is still applying its attempt (or ended first): look again in a moment; the next receive completes it if need be.
  if (read.unapplied) return { kind: 'retry', delaySeconds: 1, delivery: current };
  if (isTerminal(current.status)) return { kind: 'ack', reason: 'duplicate' };
  if (awaitsDeadLetter(current)) return { kind: 'dead_letter', delivery: current };
  return { kind: 'retry', delaySeconds: secondsUntil(current.nextAttemptAt, deps.now()), delivery: current };
}
