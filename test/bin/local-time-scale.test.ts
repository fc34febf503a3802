/**
 * The local stack's `--time-scale` (docs/architecture.md#the-local-stack): its queues divide every
 * delay, and the `nextAttemptAt` the API shows (and the console's "Next attempt") is the moment
 * the retry really comes, not the deployed backoff. A receiver failing once on a stack at ×60:
 * the retry's POST arrives when the recorded `nextAttemptAt` says, 30 s / 60 after the attempt.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RETRY_DELAY_SECONDS } from '../../lambdas/domain/backoff';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { scriptedReceiver } from '../helpers/scripted-receiver';

const SCALE = 60;
/**
 * How late the retry's POST may arrive after `nextAttemptAt`: the time the attempt's recording
 * takes before the queue starts the delay, and the next receive's reads before it POSTs, both on
 * DynamoDB Local on a busy machine (about 1.5 s measured). Unscaled, it would come 29.5 s early.
 */
const LATE_MS = 3000;
/** How early: clocks are the same process's, so only rounding. */
const EARLY_MS = 20;

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ timeScale: SCALE, schedules: false, onPipelineError: () => undefined });
}, 60_000);
afterAll(async () => {
  await api?.close();
});

async function until<T>(probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

it('records nextAttemptAt as the moment the time-scaled retry really arrives', async () => {
  const arrivals: number[] = [];
  let held: ServerResponse | undefined;
  const receiver = await scriptedReceiver((_req, res, n) => {
    arrivals.push(Date.now());
    // The retry is held until the test has read the delivery, so nextAttemptAt is still the one it went by.
    if (n === 1) res.writeHead(503).end('down');
    else held = res;
  });
  try {
    const slug = api.workspace;
    const created = await api.call('POST', `/workspaces/${slug}/webhooks`, {
      body: { url: receiver.url, eventTypes: ['webhook.test_event'] },
    });
    expect(created.status).toBe(201);
    const sent = await api.call('POST', `/workspaces/${slug}/webhooks/${created.body.endpointId}/test-event`);
    expect(sent.status).toBe(202);

    await until(() => (arrivals.length >= 2 ? true : undefined));
    const delivery = await api.call('GET', `/workspaces/${slug}/webhooks/deliveries/${sent.body.deliveryId}`);
    expect(delivery.body).toMatchObject({ status: 'failed', attempts: 1 });
    const due = Date.parse(delivery.body.nextAttemptAt);
    const [first, retry] = arrivals as [number, number];
    // The scaled backoff: 30 s at ×60 is half a second after the first attempt.
    expect(due - first).toBeGreaterThanOrEqual((RETRY_DELAY_SECONDS * 1000) / SCALE);
    expect(due - first).toBeLessThan((RETRY_DELAY_SECONDS * 1000) / SCALE + LATE_MS);
    expect(retry - due).toBeGreaterThanOrEqual(-EARLY_MS);
    expect(retry - due).toBeLessThan(LATE_MS);

    held?.writeHead(200).end('ok');
    await until(async () => {
      const r = await api.call('GET', `/workspaces/${slug}/webhooks/deliveries/${sent.body.deliveryId}`);
      return r.body.status === 'delivered' ? r : undefined;
    });
  } finally {
    await receiver.stop();
  }
});
