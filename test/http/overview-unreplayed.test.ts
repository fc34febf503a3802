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
    const created = await api.call('POST', `${ws()}/webhooks`, { body: { url: r.url, eventTypes: ['webhook.test_event'] } });
    const endpointId = created.body.endpointId as string;
    const since = new Date(Date.now() - 1000).toISOString();
    const sent: string[] = [];
    for (let i = 0; i < 3; i++) sent.push((await api.call('POST', `${ws()}/webhooks/${endpointId}/test-event`)).body.deliveryId as string);
    for (const id of sent)
      await vi.waitFor(
        async () => expect((await api.call('GET', `${ws()}/webhooks/deliveries/${id}`)).body.status).toBe('dead_lettered'),
        EVENTUALLY,
      );
    await vi.waitFor(
      async () => expect(await overview()).toMatchObject({ deliveries24h: { deadLettered: 3 }, deadLetteredUnreplayed24h: 3 }),
      EVENTUALLY,
    );
    // A disable after the streak would refuse replays: make sure the endpoint is enabled.
    await api.call('PATCH', `${ws()}/webhooks/${endpointId}`, { body: { enabled: true } });
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
    expect(job.body).toMatchObject({ matched: 2, skippedReplayed: 1 });
    await vi.waitFor(
      async () => expect((await api.call('GET', `${ws()}/jobs/${job.body.jobId}`)).body.status).toBe('completed'),
      EVENTUALLY,
    );
    expect(await overview()).toMatchObject({ deliveries24h: { deadLettered: 3 }, deadLetteredUnreplayed24h: 0 });
  }, 120_000);
});
