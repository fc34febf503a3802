/**
 * The steps of `npm run smoke`: a throwaway endpoint, one test event, its
 * delivery and evidence checked through the public REST API, the endpoint
 * deleted again, whatever happened. Each step prints one line; the first that
 * fails names itself. The test event is a test send (docs/behaviour.md#test-sends).
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { TEST_EVENT_TYPE } from '#lambdas/contract/events';
import type { Attempt, Delivery, Endpoint, RotatedSecret } from '#lambdas/contract/schemas';
import { startReceiver, type Receiver } from '../local/receiver-server';
import { apiClient, type ApiCall } from './api-client';

/** Names of the steps, as printed and as a failure names them. */
const SMOKE_STEPS = {
  receiver: 'start receiver',
  create: 'create endpoint',
  secret: 'get signing secret',
  send: 'send test event',
  wait: 'wait for delivered',
  evidence: 'check evidence',
  signature: 'verify signature',
  delete: 'delete endpoint',
} as const;

/** One step's name. */
type SmokeStep = (typeof SMOKE_STEPS)[keyof typeof SMOKE_STEPS];

/** A step that failed; its message says why. */
class SmokeStepError extends Error {
  override name = 'SmokeStepError';
  constructor(
    readonly step: SmokeStep,
    message: string,
  ) {
    super(message);
  }
}

/** Options of {@link runSmoke}. */
export interface SmokeOptions {
  /** Base URL of the REST API (the stack's `ApiUrl` output, or the local stack's). */
  readonly apiUrl: string;
  /** An API token of the workspace with write scope. */
  readonly token: string;
  /** The token's workspace slug. */
  readonly workspace: string;
  /**
   * Where the throwaway endpoint points. Without one the smoke test runs its
   * own receiver on 127.0.0.1, which only a local stack may target.
   */
  readonly receiverUrl?: string;
  /** How long to wait for `delivered`. @default 60_000 */
  readonly timeoutMs?: number;
  /** Time between two looks at the delivery. @default 250 */
  readonly pollMs?: number;
  /** Where the step lines go. */
  readonly log: (line: string) => void;
}

/** What {@link runSmoke} found. */
export type SmokeResult = { readonly ok: true } | { readonly ok: false; readonly step: SmokeStep; readonly reason: string };

/** Whether a URL's host is this machine (the only APIs the smoke test may run its own receiver for). */
export function isLoopbackUrl(url: string): boolean {
  const { hostname } = new URL(url);
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

const is2xx = (status: number | null): boolean => status !== null && status >= 200 && status < 300;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A port free on 127.0.0.1 now: the endpoint's URL needs it before the receiver can know its secret. */
async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Runs `action` as `step`: any error becomes that step's failure. */
async function step<T>(name: SmokeStep, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (e) {
    if (e instanceof SmokeStepError) throw e;
    throw new SmokeStepError(name, e instanceof Error ? e.message : String(e));
  }
}

/** Polls the delivery until it is `delivered`; a final failed status or the deadline fails the step. */
async function waitForDelivered(call: ApiCall, base: string, deliveryId: string, timeoutMs: number, pollMs: number): Promise<Delivery> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const delivery = await call<Delivery>('GET', `${base}/webhooks/deliveries/${deliveryId}`, 200);
    if (delivery.status === 'delivered') return delivery;
    const last = `status ${delivery.status}, ${delivery.attempts} attempt(s), last response ${delivery.lastResponseStatus ?? 'none'}, last error ${delivery.lastError ?? 'none'}`;
    if (delivery.status === 'failed_permanent' || delivery.status === 'dead_lettered') throw new Error(`the delivery ended ${last}`);
    if (Date.now() >= deadline) throw new Error(`not delivered within ${timeoutMs / 1000} s: ${last}`);
    await sleep(pollMs);
  }
}

/** The evidence of a delivered delivery: a delivered attempt with a 2xx and the three signature headers. */
async function checkEvidence(call: ApiCall, base: string, delivery: Delivery): Promise<Attempt> {
  if (!is2xx(delivery.lastResponseStatus))
    throw new Error(`the delivery's last response status is ${delivery.lastResponseStatus ?? 'none'}, not 2xx`);
  const page = await call<{ items: Attempt[] }>('GET', `${base}/webhooks/deliveries/${delivery.deliveryId}/attempts`, 200);
  const attempt = page.items.find((a) => a.outcome === 'delivered');
  if (!attempt)
    throw new Error(
      `no delivered attempt recorded (${page.items.length} attempt(s): ${page.items.map((a) => a.outcome).join(', ') || 'none'})`,
    );
  if (!is2xx(attempt.responseStatus))
    throw new Error(`attempt ${attempt.ordinal} recorded response status ${attempt.responseStatus ?? 'none'}, not 2xx`);
  const headers = attempt.requestHeaders;
  const missing = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].filter((h) => !headers[h]);
  if (missing.length > 0) throw new Error(`attempt ${attempt.ordinal} sent no ${missing.join(', ')} header`);
  if (headers['webhook-id'] !== delivery.deliveryId)
    throw new Error(`attempt ${attempt.ordinal} sent webhook-id ${headers['webhook-id']}, not the delivery id ${delivery.deliveryId}`);
  if (!/(^| )v1,/.test(headers['webhook-signature']!))
    throw new Error(`attempt ${attempt.ordinal} sent a webhook-signature with no v1 signature`);
  return attempt;
}

/**
 * Runs the smoke test. Never throws: the result names the failed step, and
 * the endpoint, once created, is deleted in every case (a failed delete is
 * itself a failure, so a leftover endpoint is never silent).
 */
export async function runSmoke(options: SmokeOptions): Promise<SmokeResult> {
  const { log } = options;
  const call = apiClient(options.apiUrl, options.token);
  const base = `/workspaces/${encodeURIComponent(options.workspace)}`;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const pollMs = options.pollMs ?? 250;
  const ok = (name: SmokeStep, detail: string) => log(`  ok    ${name}: ${detail}`);

  let receiver: Receiver | undefined;
  let endpointId: string | undefined;
  let failure: SmokeStepError | undefined;
  // Lines of the smoke's own receiver, shown when it saw a request.
  const receiverLines: string[] = [];

  log(`Smoke test of ${options.apiUrl} (workspace ${options.workspace})`);
  try {
    let targetUrl = options.receiverUrl;
    let port: number | undefined;
    if (targetUrl === undefined) {
      port = await step(SMOKE_STEPS.receiver, freeLoopbackPort);
      targetUrl = `http://127.0.0.1:${port}/smoke`;
    }
    const target = targetUrl;

    const endpoint = await step(SMOKE_STEPS.create, () =>
      call<Endpoint>('POST', `${base}/webhooks`, 201, {
        url: target,
        eventTypes: [TEST_EVENT_TYPE],
        description: `smoke test ${new Date().toISOString()} (deleted when it ends)`,
      }),
    );
    endpointId = endpoint.endpointId;
    ok(SMOKE_STEPS.create, `${endpoint.endpointId} -> ${target}`);

    if (port !== undefined) {
      // The secret is minted at creation but shown only by a rotation (docs/behaviour.md#secret-rotation).
      const rotated = await step(SMOKE_STEPS.secret, () =>
        call<RotatedSecret>('POST', `${base}/webhooks/${endpoint.endpointId}/rotate-secret`, 200),
      );
      ok(SMOKE_STEPS.secret, 'rotated; the new secret stays in this process');
      const listenOn = port;
      receiver = await step(SMOKE_STEPS.receiver, () =>
        startReceiver({ port: listenOn, secret: rotated.secret, log: (line) => receiverLines.push(line) }),
      );
      ok(SMOKE_STEPS.receiver, `${receiver.url}, verifying signatures with the standardwebhooks library`);
    } else {
      log(
        `  --    ${SMOKE_STEPS.signature}: skipped, the receiver at ${target} is yours (the smoke test checks the headers the service recorded)`,
      );
    }

    const queued = await step(SMOKE_STEPS.send, () => call<Delivery>('POST', `${base}/webhooks/${endpoint.endpointId}/test-event`, 202));
    ok(SMOKE_STEPS.send, `delivery ${queued.deliveryId} queued`);

    const started = Date.now();
    let delivered: Delivery;
    try {
      delivered = await step(SMOKE_STEPS.wait, () => waitForDelivered(call, base, queued.deliveryId, timeoutMs, pollMs));
    } catch (e) {
      // A signature the smoke's own receiver refused is why nothing was delivered: name that step.
      const rejected = receiverLines.find((line) => line.includes('REJECTED'));
      if (rejected && e instanceof SmokeStepError)
        throw new SmokeStepError(SMOKE_STEPS.signature, `the receiver rejected the request: ${rejected.trim()} (${e.message})`);
      throw e;
    }
    ok(SMOKE_STEPS.wait, `delivered after ${delivered.attempts} attempt(s) in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    const attempt = await step(SMOKE_STEPS.evidence, () => checkEvidence(call, base, delivered));
    ok(
      SMOKE_STEPS.evidence,
      `attempt ${attempt.ordinal} ${attempt.outcome}, HTTP ${attempt.responseStatus}, in ${attempt.durationMs ?? '?'} ms, webhook-id, webhook-timestamp and webhook-signature sent`,
    );

    const seen = receiver;
    if (seen !== undefined) {
      await step(SMOKE_STEPS.signature, async () => {
        // The receiver records only requests whose signature the library verified with the secret.
        const got = seen.received.find((r) => r.webhookId === queued.deliveryId);
        if (!got) throw new Error(`the receiver recorded no verified request with webhook-id ${queued.deliveryId}`);
        if (!got.verified) throw new Error(`the request with webhook-id ${queued.deliveryId} was not verified`);
        if (got.eventType !== TEST_EVENT_TYPE || got.deliveryId !== queued.deliveryId)
          throw new Error(`the verified body is not the test event of ${queued.deliveryId}`);
      });
      ok(SMOKE_STEPS.signature, `the receiver verified ${queued.deliveryId} with the endpoint's secret`);
    }
  } catch (e) {
    failure = e instanceof SmokeStepError ? e : new SmokeStepError(SMOKE_STEPS.create, e instanceof Error ? e.message : String(e));
    log(`  FAIL  ${failure.step}: ${failure.message}`);
    for (const line of receiverLines) log(`        receiver: ${line}`);
  }

  if (endpointId !== undefined) {
    const id = endpointId;
    try {
      await step(SMOKE_STEPS.delete, () => call('DELETE', `${base}/webhooks/${id}`, 204));
      ok(SMOKE_STEPS.delete, `${id} deleted`);
    } catch (e) {
      const error = e as SmokeStepError;
      log(`  FAIL  ${error.step}: ${error.message} (delete ${id} by hand)`);
      failure ??= error;
    }
  }
  await receiver?.stop();

  if (failure) {
    log(`Smoke test FAILED at step "${failure.step}".`);
    return { ok: false, step: failure.step, reason: failure.message };
  }
  log('Smoke test passed.');
  return { ok: true };
}
