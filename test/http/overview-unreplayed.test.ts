/**
 * The overview's dead letters with no replay yet, in the real local stack: dead-lettered test
 * sends count until each is replayed (interactively or by a recovery), and a second replay of one
 * source does not count twice.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { usePipelineApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
const ws = () => `/workspaces/${api.workspace}`;
const pipeline = usePipelineApi();

beforeAll(() => {
  api = pipeline.api;
});

const EVENTUALLY = { timeout: 20_000, interval: 50 };

const overview = async () =>
  (await api.call('GET', `${ws()}/overview`)).body as { deliveries24h: { deadLettered: number }; deadLetteredUnreplayed24h: number };

describe('deadLetteredUnreplayed24h', () => {
  it('counts dead letters until they are replayed, each source once', async () => {
    expect((await overview()).deadLetteredUnreplayed24h).toBe(0);
    let failing = true;
    const r = await pipeline.receiver((_req, res) => res.writeHead(failing ? 503 : 200).end());
    // Two endpoints, so no endpoint reaches the 20 consecutive failures that disable it (each dead
    // letter takes 7 attempts) and closes a delivery as failed_permanent instead.
    const create = async () =>
      (await api.call('POST', `${ws()}/webhooks`, { body: { url: r.url, eventTypes: ['webhook.test_event'] } })).body.endpointId as string;
    const endpointId = await create();
    const other = await create();
    const since = new Date(Date.now() - 1000).toISOString();
    const sent: string[] = [];
    for (const ep of [endpointId, endpointId, other])
      sent.push((await api.call('POST', `${ws()}/webhooks/${ep}/test-event`)).body.deliveryId as string);
    for (const id of sent)
      await vi.waitFor(
        async () => expect((await api.call('GET', `${ws()}/webhooks/deliveries/${id}`)).body.status).toBe('dead_lettered'),
        EVENTUALLY,
      );
    await vi.waitFor(
      async () => expect(await overview()).toMatchObject({ deliveries24h: { deadLettered: 3 }, deadLetteredUnreplayed24h: 3 }),
      EVENTUALLY,
    );
    failing = false;

    const replay = await api.call('POST', `${ws()}/webhooks/deliveries/${sent[0]}/replay`);
    expect(replay.status, replay.text).toBe(202);
    expect((await overview()).deadLetteredUnreplayed24h).toBe(2);
    // A second replay of the same source: still 2.
    expect((await api.call('POST', `${ws()}/webhooks/deliveries/${sent[0]}/replay`)).status).toBe(202);
    expect((await overview()).deadLetteredUnreplayed24h).toBe(2);

    // Recovering the rest clears it.
    const job = await api.call('POST', `${ws()}/webhooks/${endpointId}/recover`, { body: { since } });
    expect(job.status, job.text).toBe(202);
    expect(job.body).toMatchObject({ matched: 1, skippedReplayed: 1 });
    const otherJob = await api.call('POST', `${ws()}/webhooks/${other}/recover`, { body: { since } });
    expect(otherJob.body).toMatchObject({ matched: 1, skippedReplayed: 0 });
    for (const id of [job.body.jobId, otherJob.body.jobId])
      await vi.waitFor(async () => expect((await api.call('GET', `${ws()}/jobs/${id}`)).body.status).toBe('completed'), EVENTUALLY);
    expect(await overview()).toMatchObject({ deliveries24h: { deadLettered: 3 }, deadLetteredUnreplayed24h: 0 });
  }, 120_000);
});
