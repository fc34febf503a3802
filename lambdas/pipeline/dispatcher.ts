/**
 * The dispatcher's work on one queued delivery (docs/architecture.md#dispatcher,
 * docs/behaviour.md#outbound-request), in four phases, each taking the one before's result:
 * prepare (load, check, sign) → send (POST) → record (write the observation) → decide (what the
 * queue does: lambdas/pipeline/delivery-decision.ts, pure). Pure of AWS: the queue's ack / retry
 * is the caller's, from the result.
 */
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { nextAttemptAt } from '../domain/backoff';
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
import { AUTH_FAILED } from '../contract/delivery-statuses';
import { SEND_LIMITS, USER_AGENT } from '../contract/limits';
import { openHeaders, redactRequestHeaders } from '../domain/endpoint-options';
import { activeSecrets, openSecrets, type SecretSealer } from '../domain/secrets';
import { signatureHeader } from '../domain/signing';
import { redactUrl } from '../domain/url-redaction';
import { checkWebhookUrl, isPublicAddress, type UrlCheckOptions } from '../domain/webhook-url';
import type { TableContext } from '../store/client';
import { readDelivery, recordObservation, type Observation, type UnappliedAttempt } from '../store/deliveries';
import { getEndpointRecord, markEndpointSlow, type EndpointRecord } from '../store/endpoints';
import { putNotification } from '../store/notifications';
import { syncSubscriptionCopies } from '../store/subscriptions';
import { healthObservation } from './batch-health';
import { decideDispatch, type DispatchObservation, type DispatchResult, type HaltedDispatch } from './delivery-decision';
import type { PinnedAddress, Sender, SendResult } from './http-sender';
import { createDnsResolver, DnsLookupError } from './dns-resolver';
import { containerTokenCache, type TokenCache } from './oauth-token';

/**
 * Resolves a host name to its addresses; a failure is a {@link DnsLookupError} naming whose fault
 * it is (any other error counts as the service's own).
 */
export type Resolver = (hostname: string) => Promise<PinnedAddress[]>;

/** The production resolver: c-ares, A and AAAA, under its own short deadline (docs/behaviour.md#name-resolution). */
export const systemResolver: Resolver = createDnsResolver();

/** Where the dispatcher writes what evidence must not show (Powertools' logger fits). */
interface DispatchLog {
  warn(message: string, attributes: Record<string, unknown>): void;
}

/** Reads an endpoint for a dispatch; null when it is gone. */
export type EndpointReader = (workspace: string, endpointId: string) => Promise<EndpointRecord | null>;

/** Adapters of the dispatcher. */
export interface DispatchDeps {
  readonly table: TableContext;
  readonly now: () => Date;
  readonly sender: Sender;
  readonly resolve: Resolver;
  readonly urlPolicy: UrlCheckOptions;
  /** Trace id of an attempt (`x-trace-id`). @default a random UUID */
  readonly traceId?: () => string;
  /** The function's logger: refused addresses and service faults, in detail. @default none */
  readonly log?: DispatchLog;
  /**
   * Reads an endpoint for a dispatch: a batch passes one that reads each endpoint once per batch
   * (docs/architecture.md#dispatcher). @default a strongly consistent read per delivery
   */
  readonly endpoint?: EndpointReader;
  /**
   * Opens the endpoint's sealed secrets (docs/architecture.md#secrets); the dispatcher is the one
   * function allowed to. A secret it cannot open throws before any attempt (the message is received again).
   */
  readonly secrets: SecretSealer;
  /**
   * The local stack's time scale (docs/architecture.md#the-local-stack): its queues divide every
   * delay by it, so `nextAttemptAt` is recorded at the moment the retry really comes, and a
   * recorded `nextAttemptAt` turns back into a queue delay multiplied by it. @default 1 (deployed)
   */
  readonly timeScale?: number;
  /** OAuth 2.0 tokens of the endpoints that use it (docs/behaviour.md#oauth-20-client-credentials). @default the container's */
  readonly tokens?: TokenCache;
  /**
   * The share of a rate-limited endpoint's budget this dispatch may use
   * (docs/behaviour.md#delivery-rate-per-endpoint), asked before anything is sent. @default no rate limit
   */
  readonly rate?: RateGate;
}

/**
 * A dispatch's share of its endpoint's rate budget: whether it may send, and in which window (epoch
 * ms, on {@link DispatchDeps.now}'s clock): from `sendAfter`, before `sendBy`.
 */
export interface RateShare {
  readonly granted: boolean;
  readonly sendAfter: number;
  readonly sendBy: number;
}

/** Answers a dispatch's share of `endpoint`'s rate budget; null when the endpoint has no rate. */
type RateGate = (endpoint: EndpointRecord) => Promise<RateShare | null>;

/**
 * An endpoint reader for one batch (docs/architecture.md#dispatcher): each endpoint is read once,
 * strongly consistent, however many of the batch's deliveries go to it, so a busy endpoint costs a
 * read per batch, not per delivery. A batch is seconds long; a change during it is what a
 * concurrent batch would see anyway, and the streak's writes are conditional on what was read
 * (a concurrent change is re-read, never overwritten).
 */
export function endpointReaderForBatch(table: TableContext): EndpointReader {
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

/** The address to pin (and the URL it serves) with the time resolving it took, or why the attempt stops here. */
type AddressCheck =
  { ok: true; url: URL; pinned: PinnedAddress; spentMs: number } | { ok: false; permanent: boolean; reason: string; spentMs: number };

/** An attempt ready to send: the prepare phase's result when there is something to POST. */
interface PreparedAttempt {
  readonly kind: 'attempt';
  readonly delivery: DeliveryRecord;
  readonly endpoint: EndpointRecord;
  /** When the attempt starts: its evidence's timestamp and its signature's. */
  readonly startedAt: Date;
  /** The signed request, custom headers included (its headers, secret values redacted, are the attempt's evidence). */
  readonly request: { readonly headers: Record<string, string>; readonly body: string };
  readonly address: AddressCheck;
  /** The rate budget's window of this attempt: it is sent in it, or not at all. Absent: no rate. */
  readonly window?: { readonly sendAfter: number; readonly sendBy: number };
}

/**
 * The prepare phase's result: a reason to stop (nothing sent, nothing recorded), something to
 * record without sending (an attempt an earlier receive stored, the bookkeeping of a disabled
 * endpoint), or an attempt to send.
 */
type PreparedDispatch =
  | HaltedDispatch
  | {
      readonly kind: 'roll_forward';
      readonly delivery: DeliveryRecord;
      readonly endpoint: EndpointRecord | null;
      readonly unapplied: UnappliedAttempt;
    }
  | { readonly kind: 'endpoint_disabled'; readonly delivery: DeliveryRecord; readonly endpoint: EndpointRecord; readonly now: Date }
  | PreparedAttempt;

/** The send phase's verdict that the rate budget's second ended before the POST: nothing sent, nothing recorded. */
type OverRate = Extract<HaltedDispatch, { kind: 'over_rate' }>;

/** The send phase's result: the prepared attempt, what the POST (or the refusal) gave, and how it classifies. */
interface SentAttempt {
  readonly kind: 'sent';
  readonly prepared: PreparedAttempt;
  readonly result: SendResult;
  readonly classified: Classified;
  readonly finishedAt: Date;
  /** The headers the POST carried (the bearer token included), for the evidence. */
  readonly sentHeaders: Record<string, string>;
  /**
   * Whether the endpoint was marked slow while the POST ran; read when the recording is done, as a
   * mark started near the deadline may land after the POST.
   */
  readonly markedWhileSending: () => boolean;
}

/**
 * Dispatches one delivery: prepare → send → record → decide. `lane` is the queue it came from
 * (docs/behaviour.md#delivery-lanes); `only` when the stage has no slow lane, and then nothing moves.
 */
export async function dispatchDelivery(deps: DispatchDeps, deliveryId: string, lane: LaneRole = 'only'): Promise<DispatchResult> {
  const prepared = await prepareDispatch(deps, deliveryId, lane);
  return decideDispatch(await observeDispatch(deps, prepared, lane), deps.timeScale);
}

/** The send and record phases of what was prepared: what the decision is made of. */
async function observeDispatch(deps: DispatchDeps, prepared: PreparedDispatch, lane: LaneRole): Promise<DispatchObservation> {
  switch (prepared.kind) {
    case 'attempt': {
      const sent = await sendAttempt(deps, prepared, lane);
      return sent.kind === 'over_rate' ? sent : recordAttempt(deps, sent, lane);
    }
    case 'roll_forward':
      return rollForward(deps, prepared);
    case 'endpoint_disabled':
      return recordEndpointDisabled(deps, prepared);
    default:
      return prepared;
  }
}

// ---- prepare

/**
 * Loads the delivery and its endpoint, checks whether there is anything to send, checks the URL
 * and every address it resolves to, and signs the request.
 */
async function prepareDispatch(deps: DispatchDeps, deliveryId: string, lane: LaneRole): Promise<PreparedDispatch> {
  const read = await readDelivery(deps.table, deliveryId);
  if (!read) return { kind: 'delivery_gone' };
  const delivery = read.record;
  const loadEndpoint = () =>
    (deps.endpoint ?? ((ws, id) => getEndpointRecord(deps.table, ws, id)))(delivery.workspace, delivery.endpointId);
  // An attempt was written but the receive that made it ended before the state caught up: complete it, no second POST.
  if (read.unapplied) return { kind: 'roll_forward', delivery, endpoint: await loadEndpoint(), unapplied: read.unapplied };
  if (isTerminal(delivery.status)) return { kind: 'already_terminal', delivery };
  if (awaitsDeadLetter(delivery)) return { kind: 'awaits_dead_letter', delivery };
  const endpoint = await loadEndpoint();
  if (!endpoint) return { kind: 'endpoint_gone', delivery };
  const now = deps.now();
  if (!endpoint.enabled) return { kind: 'endpoint_disabled', delivery, endpoint, now };
  // A failing or slow endpoint's delivery waits in the slow lane, not in a fast batch.
  if (lane === 'fast' && laneOf(endpoint, now) === 'slow') return { kind: 'slow_endpoint', delivery, now };
  // Over its endpoint's rate: it waits in its queue, nothing recorded.
  const share = deps.rate ? await deps.rate(endpoint) : null;
  if (share && !share.granted) return { kind: 'over_rate', delivery };

  // Dispatch-time URL check: the endpoint rules again, then every resolved address.
  const check = checkWebhookUrl(endpoint.url, deps.urlPolicy);
  const address = check.ok
    ? await checkedAddress(deps, check.url, delivery)
    : ({ ok: false, permanent: true, reason: `invalid_url: ${check.detail}`, spentMs: 0 } as const);

  // Before any attempt is recorded: a secret that cannot be opened is the service's fault, and the message comes back.
  const signingSecrets = await openSecrets(activeSecrets(endpoint.secrets, now), deps.secrets);
  const custom = await openHeaders(endpoint.options?.headers, deps.secrets);
  const timestamp = Math.floor(now.getTime() / 1000);
  const body = JSON.stringify({ deliveryId: delivery.deliveryId, eventType: delivery.eventType, payload: delivery.payload });
  // The service's own headers last: no custom header can replace one (their names are refused anyway).
  const headers: Record<string, string> = {
    ...custom,
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': delivery.deliveryId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(signingSecrets, delivery.deliveryId, timestamp, body),
    'x-trace-id': (deps.traceId ?? randomUUID)(),
  };
  return {
    kind: 'attempt',
    delivery,
    endpoint,
    startedAt: now,
    request: { headers, body },
    address,
    ...(share ? { window: { sendAfter: share.sendAfter, sendBy: share.sendBy } } : {}),
  };
}

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
  return { ok: true, url, pinned: addresses[0]!, spentMs: spent() };
}

/** The log attributes naming a delivery. */
function about(delivery: DeliveryRecord): Record<string, string> {
  return { deliveryId: delivery.deliveryId, workspace: delivery.workspace, endpointId: delivery.endpointId };
}

// ---- send

/**
 * POSTs the prepared request to the pinned address (a refused or unresolved address sends
 * nothing), marking the endpoint slow while a POST outlasts {@link SLOW_LANE.slowAttemptMs} where
 * there are lanes, and classifies the outcome.
 */
async function sendAttempt(deps: DispatchDeps, prepared: PreparedAttempt, lane: LaneRole): Promise<SentAttempt | OverRate> {
  const { delivery, endpoint, request, address } = prepared;
  let markedWhileSending = false;
  let result: SendResult;
  let classified: Classified;
  let sentHeaders = request.headers;
  const auth = endpoint.options?.auth;
  const token =
    address.ok && auth
      ? await (deps.tokens ?? containerTokenCache).token(endpoint.endpointId, auth, deps, SEND_LIMITS.deadlineMs - address.spentMs)
      : null;
  if (!address.ok) {
    // A refusal sent nothing (duration 0, docs/behaviour.md#status-transitions); a failed resolution took its time.
    result = { kind: 'error', reason: address.reason, durationMs: address.permanent ? 0 : address.spentMs };
    classified = address.permanent ? refusedAtDispatch(address.reason) : classify(result);
  } else if (token && !token.ok) {
    // No token, no POST: the token endpoint's failure is the attempt's (its body is never kept).
    const reason = token.serviceFault ?? AUTH_FAILED;
    deps.log?.warn('No OAuth 2.0 token for a delivery; the attempt fails and is retried', {
      ...about(delivery),
      reason,
      tokenStatus: token.status,
      why: token.why,
      tokenMs: token.durationMs,
    });
    result = { kind: 'error', reason, durationMs: address.spentMs + token.durationMs };
    classified = classify(result);
  } else {
    if (prepared.window) {
      // The rate budget's second: wait for it to start; past its end (a slow read or token request), not sent, back unspent.
      const early = prepared.window.sendAfter - deps.now().getTime();
      if (early > 0) await new Promise((resolve) => setTimeout(resolve, early));
      if (deps.now().getTime() >= prepared.window.sendBy) return { kind: 'over_rate', delivery };
    }
    if (token) sentHeaders = { ...request.headers, authorization: `Bearer ${token.token}` };
    // Resolution (and the token request) is part of the attempt's deadline: the POST gets what is left of it.
    const send = deps.sender({
      url: address.url,
      headers: sentHeaders,
      body: request.body,
      pinned: address.pinned,
      spentMs: address.spentMs + (token?.durationMs ?? 0),
    });
    result = lane === 'only' ? await send : await markedIfSlow(deps, endpoint, send, () => (markedWhileSending = true));
    if (token) result = { ...result, durationMs: result.durationMs + token.durationMs };
    classified = classify(result);
    if (token && result.kind === 'response' && result.status === 401) {
      // The token may have expired or been revoked early: forget it, and retry (with a new one) rather than give up.
      (deps.tokens ?? containerTokenCache).drop(endpoint.endpointId, auth!);
      classified = { ...classified, status: 'failed' };
    }
    if (result.kind === 'error' && isServiceFault(result.reason)) {
      deps.log?.warn('Delivery attempt failed on our side; it is retried, its endpoint streak unchanged', {
        ...about(delivery),
        reason: result.reason,
      });
    }
  }
  return { kind: 'sent', prepared, result, classified, finishedAt: deps.now(), sentHeaders, markedWhileSending: () => markedWhileSending };
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

// ---- record

/**
 * Records a sent attempt (its evidence, the state it leads to, the streak), then marks a slow
 * endpoint and announces an auto-disable.
 */
async function recordAttempt(deps: DispatchDeps, sent: SentAttempt, lane: LaneRole): Promise<DispatchObservation> {
  const { prepared, result, classified, finishedAt, sentHeaders } = sent;
  const { delivery, endpoint } = prepared;
  const attempts = delivery.attempts + 1;
  const exhausted = classified.status === 'failed' && retriesExhausted(attempts);
  const attempt = {
    outcome: classified.status,
    timestamp: prepared.startedAt.toISOString(),
    durationMs: result.durationMs,
    failureReason: classified.reason,
    // Every header sent, by name; secret values (custom ones, the bearer token) never stored.
    requestHeaders: redactRequestHeaders(sentHeaders),
    responseStatus: result.kind === 'response' ? result.status : null,
    responseBody: result.kind === 'response' ? result.body : null,
  };
  const outcome = await persist(deps, delivery, endpoint, {
    attempt,
    status: classified.status,
    // A refused address counts as an attempt that failed before connecting.
    http: true,
    nextAttemptAt: classified.status === 'failed' && !exhausted ? nextAttemptAt(attempts, finishedAt, deps.timeScale).toISOString() : null,
    streak: classified.streak,
    disableAudit: disableAudit(delivery, endpoint),
  });
  if (outcome.kind === 'duplicate') return duplicateSeen(deps, delivery.deliveryId);
  const observation = healthObservation(delivery, true, attempt);
  const slowMarked = lane === 'only' ? false : sent.markedWhileSending() || (await markSlow(deps, endpoint, result.durationMs, finishedAt));
  if (outcome.disabled) await announceDisabled(deps, endpoint, delivery, outcome.consecutiveFailures);
  return {
    kind: 'attempted',
    lane,
    classified,
    attempts,
    exhausted,
    slowMarked,
    recorded: { delivery: outcome.delivery, observation, disabled: outcome.disabled },
  };
}

/**
 * Completes an attempt whose state never caught up (docs/architecture.md#delivery-items): applies
 * the effect stored on it, with the endpoint's streak as it is now; the decision then does what
 * the receive that made it would have done. Nothing is sent to the receiver again.
 */
async function rollForward(
  deps: DispatchDeps,
  { delivery, endpoint, unapplied }: Extract<PreparedDispatch, { kind: 'roll_forward' }>,
): Promise<DispatchObservation> {
  const { attempt, applies } = unapplied;
  const { ordinal: _ordinal, ...evidence } = attempt;
  const outcome = await persist(
    deps,
    delivery,
    endpoint,
    { attempt: evidence, ...applies, ...(endpoint ? { disableAudit: disableAudit(delivery, endpoint) } : {}) },
    true,
  );
  if (outcome.kind === 'duplicate') return duplicateSeen(deps, delivery.deliveryId);
  if (outcome.disabled && endpoint) await announceDisabled(deps, endpoint, delivery, outcome.consecutiveFailures);
  const observation = healthObservation(delivery, applies.http, attempt);
  return {
    kind: 'rolled_forward',
    applies,
    now: deps.now(),
    recorded: { delivery: outcome.delivery, observation, disabled: outcome.disabled },
  };
}

/** Terminal bookkeeping of a disabled endpoint's delivery: no HTTP attempt, no streak change; replayable once re-enabled. */
async function recordEndpointDisabled(
  deps: DispatchDeps,
  { delivery, endpoint, now }: Extract<PreparedDispatch, { kind: 'endpoint_disabled' }>,
): Promise<DispatchObservation> {
  const entry = bookkeepingEntry(now, 'failed_permanent', ENDPOINT_DISABLED);
  const outcome = await persist(deps, delivery, endpoint, {
    attempt: entry,
    status: 'failed_permanent',
    http: false,
    nextAttemptAt: null,
    streak: 'none',
  });
  return {
    kind: 'endpoint_disabled',
    recorded:
      outcome.kind === 'recorded'
        ? { delivery: outcome.delivery, observation: healthObservation(delivery, false, entry), disabled: outcome.disabled }
        : null,
  };
}

/**
 * The audit event of a streak that disables the endpoint, with its `webhook.disabled` domain event:
 * both written in the disabling transaction (docs/architecture.md#outbox).
 */
function disableAudit(delivery: DeliveryRecord, endpoint: EndpointRecord): NonNullable<Observation['disableAudit']> {
  return {
    action: 'webhook.disabled',
    actor: 'system',
    detail: { consecutiveFailures: DISABLE_THRESHOLD, lastDeliveryId: delivery.deliveryId },
    event: {
      type: 'webhook.disabled',
      payload: { endpointId: endpoint.endpointId, url: redactUrl(endpoint.url), consecutiveFailures: DISABLE_THRESHOLD },
    },
  };
}

/**
 * Records an observation, re-reading the endpoint when a concurrent change moved its streak
 * (bounded): the attempt is then stored already, and only the state and streak are applied again.
 */
async function persist(
  deps: DispatchDeps,
  delivery: DeliveryRecord,
  endpoint: EndpointRecord | null,
  effect: Omit<Observation, 'delivery' | 'endpoint'>,
  attemptWritten = false,
) {
  let ep = endpoint;
  let written = attemptWritten;
  for (let i = 0; i < 5; i++) {
    const outcome = await recordObservation(deps.table, { delivery, endpoint: ep, ...effect }, deps.now(), { attemptWritten: written });
    if (outcome.kind !== 'endpoint_changed') return outcome;
    written = true;
    ep = await getEndpointRecord(deps.table, delivery.workspace, delivery.endpointId);
  }
  throw new Error(`endpoint ${delivery.endpointId} kept changing while recording ${delivery.deliveryId}`);
}

/** Another receive recorded first: the delivery as it now stands, for the decision. */
async function duplicateSeen(deps: DispatchDeps, deliveryId: string): Promise<DispatchObservation> {
  const read = await readDelivery(deps.table, deliveryId);
  return { kind: 'duplicate', current: read?.record ?? null, stillApplying: Boolean(read?.unapplied), now: deps.now() };
}

/**
 * After an auto-disable, best effort: the subscription copies and a notification
 * (docs/behaviour.md#notifications). Its domain event was written with the disable itself.
 */
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
}
