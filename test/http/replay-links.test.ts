/**
 * Replays linked both ways, in the real local stack (docs/behaviour.md#replay,
 * docs/behaviour.md#recovery-jobs): a replay writes its link under its source, so the source's
 * GET lists its replays (newest first, with status and creation time) while the source itself is
 * unchanged, and each replay names its source; a recovery run twice over the same window replays
 * nothing the second time unless `includeReplayed`; two replays of one source at once both link.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { usePipelineApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
const ws = () => `/workspaces/${api.workspace}`;
const pipeline = usePipelineApi();

beforeAll(() => {
  api = pipeline.api;
});

/** How long the pipeline gets to reach a state, and how often it is looked at. */
const EVENTUALLY = { timeout: 15_000, interval: 25 };

const delivery = (id: string) => api.call('GET', `${ws()}/webhooks/deliveries/${id}`);

/** An endpoint to a receiver answering 200, disabled, so what is published to it is held (failed_permanent). */
async function heldEndpoint() {
  const r = await pipeline.receiver((_req, res) => res.writeHead(200).end('ok'));
  const created = await api.call('POST', `${ws()}/webhooks`, { body: { url: r.url, eventTypes: ['order.shipped'] } });
  expect(created.status).toBe(201);
  const endpointId = created.body.endpointId as string;
  expect((await api.call('PATCH', `${ws()}/webhooks/${endpointId}`, { body: { enabled: false } })).status).toBe(200);
  return { endpointId, receiver: r };
}

/** Publishes order.shipped; the ids of its held deliveries to `endpointId`. */
async function publishHeld(endpointId: string, orderId: string): Promise<string> {
  const res = await fetch(`${api.apiUrl}/local/events`, {
    method: 'POST',
    body: JSON.stringify({ workspace: api.workspace, type: 'order.shipped', payload: { orderId } }),
  });
  expect(res.status).toBe(202);
  const held = ((await res.json()) as { heldDeliveryIds: string[] }).heldDeliveryIds;
  for (const id of held) if ((await delivery(id)).body.endpointId === endpointId) return id;
  throw new Error(`no held delivery to ${endpointId}`);
}

async function enable(endpointId: string) {
  expect((await api.call('PATCH', `${ws()}/webhooks/${endpointId}`, { body: { enabled: true } })).status).toBe(200);
}

/** Starts a recovery and waits for it to finish; the finished job. */
async function recover(endpointId: string, body: Record<string, unknown>) {
  const started = await api.call('POST', `${ws()}/webhooks/${endpointId}/recover`, { body });
  expect(started.status, started.text).toBe(202);
  return vi.waitFor(async () => {
    const job = await api.call('GET', `${ws()}/jobs/${started.body.jobId}`);
    expect(job.body.status, 'job status').toBe('completed');
    return job.body as { matched: number; replayed: number; skipped: number; skippedReplayed: number; includeReplayed: boolean };
  }, EVENTUALLY);
}

describe('recovery over a window it already recovered', () => {
  it('replays nothing the second time (the dry run says how many it skipped), and again with includeReplayed', async () => {
    const { endpointId, receiver } = await heldEndpoint();
    const since = new Date(Date.now() - 1000).toISOString();
    const sources = [await publishHeld(endpointId, 'twice-1'), await publishHeld(endpointId, 'twice-2')];
    await enable(endpointId);

    const first = await recover(endpointId, { since });
    expect(first).toMatchObject({ matched: 2, replayed: 2, skippedReplayed: 0 });
    await vi.waitFor(() => expect(receiver.seen).toHaveLength(2), EVENTUALLY);

    // Every source now has a replay: the same window matches nothing, and says why.
    const dry = await api.call('POST', `${ws()}/webhooks/${endpointId}/recover`, { body: { since, dryRun: true } });
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({ matched: 0, matchedAtLeast: false, skippedReplayed: 2 });
    const second = await recover(endpointId, { since });
    expect(second).toMatchObject({ matched: 0, replayed: 0, skippedReplayed: 2, includeReplayed: false });
    // Nothing was sent twice.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.seen).toHaveLength(2);

    // The first replays were delivered, so only the sources match; includeReplayed takes them again.
    const dryAll = await api.call('POST', `${ws()}/webhooks/${endpointId}/recover`, {
      body: { since, dryRun: true, includeReplayed: true },
    });
    expect(dryAll.body).toEqual({ matched: 2, matchedAtLeast: false, skippedReplayed: 0 });
    const third = await recover(endpointId, { since, includeReplayed: true });
    expect(third).toMatchObject({ matched: 2, replayed: 2, includeReplayed: true });
    await vi.waitFor(() => expect(receiver.seen).toHaveLength(4), EVENTUALLY);

    for (const source of sources) {
      const got = await delivery(source);
      // The source is unchanged: still held, never attempted.
      expect(got.body).toMatchObject({ status: 'failed_permanent', attempts: 0, replayedFrom: null });
      const replays = got.body.replays as { deliveryId: string; status: string; createdAt: string }[];
      expect(replays).toHaveLength(2);
      // Newest first: a replay id's time part is its creation time.
      expect(replays.map((r) => r.deliveryId)).toEqual(
        replays
          .map((r) => r.deliveryId)
          .sort()
          .reverse(),
      );
      expect(Date.parse(replays[0]!.createdAt)).toBeGreaterThanOrEqual(Date.parse(replays[1]!.createdAt));
      for (const link of replays) {
        const replay = await vi.waitFor(async () => {
          const d = await delivery(link.deliveryId);
          expect(d.body.status).toBe('delivered');
          return d;
        }, EVENTUALLY);
        // Each replay names its source and carries its event.
        expect(replay.body).toMatchObject({ replayedFrom: source, eventId: got.body.eventId, createdAt: link.createdAt });
        expect(replay.body.replays).toEqual([]);
      }
      expect((await delivery(source)).body.replays.map((r: { status: string }) => r.status)).toEqual(['delivered', 'delivered']);
    }
    // A list item carries no replays: they are the GET's.
    const list = await api.call('GET', `${ws()}/webhooks/${endpointId}/deliveries`);
    expect(list.body.items.length).toBeGreaterThan(0);
    for (const item of list.body.items) expect(item).not.toHaveProperty('replays');
  });

  it('a failed replay with no replay of its own is a candidate: the head of its chain', async () => {
    let failing = true;
    const r = await pipeline.receiver((_req, res) => res.writeHead(failing ? 410 : 200).end());
    const created = await api.call('POST', `${ws()}/webhooks`, { body: { url: r.url, eventTypes: ['order.shipped'] } });
    const endpointId = created.body.endpointId as string;
    await api.call('PATCH', `${ws()}/webhooks/${endpointId}`, { body: { enabled: false } });
    const since = new Date(Date.now() - 1000).toISOString();
    const source = await publishHeld(endpointId, 'chain-1');
    await enable(endpointId);
    // The first recovery's replay fails for good (410: failed_permanent).
    await recover(endpointId, { since });
    const [head] = (await delivery(source)).body.replays as { deliveryId: string }[];
    await vi.waitFor(async () => expect((await delivery(head!.deliveryId)).body.status).toBe('failed_permanent'), EVENTUALLY);
    // The source has a replay; its failed replay has none: only the replay matches.
    failing = false;
    const dry = await api.call('POST', `${ws()}/webhooks/${endpointId}/recover`, { body: { since, dryRun: true } });
    expect(dry.body).toEqual({ matched: 1, matchedAtLeast: false, skippedReplayed: 1 });
    expect(await recover(endpointId, { since })).toMatchObject({ replayed: 1 });
    const next = (await delivery(head!.deliveryId)).body.replays as { deliveryId: string }[];
    expect(next).toHaveLength(1);
    expect((await delivery(next[0]!.deliveryId)).body.replayedFrom).toBe(head!.deliveryId);
    expect((await delivery(source)).body.replays).toHaveLength(1);
  });
});

describe('interactive replays', () => {
  it('two replays of one source at once both link, and the source is unchanged', async () => {
    const { endpointId } = await heldEndpoint();
    const source = await publishHeld(endpointId, 'double-1');
    await enable(endpointId);
    const before = (await delivery(source)).body;
    const [a, b] = await Promise.all([
      api.call('POST', `${ws()}/webhooks/deliveries/${source}/replay`),
      api.call('POST', `${ws()}/webhooks/deliveries/${source}/replay`),
    ]);
    expect([a.status, b.status], `${a.text} ${b.text}`).toEqual([202, 202]);
    const after = (await delivery(source)).body;
    expect(after.replays.map((r: { deliveryId: string }) => r.deliveryId).sort()).toEqual(
      [a.body.deliveryId as string, b.body.deliveryId as string].sort(),
    );
    // The source itself is exactly as it was; only its replays are new.
    const { replays: none, ...sourceBefore } = before;
    const { replays, ...sourceAfter } = after;
    expect(none).toEqual([]);
    expect(replays).toHaveLength(2);
    expect(sourceAfter).toEqual(sourceBefore);
    for (const replay of [a.body, b.body]) expect(replay).toMatchObject({ replayedFrom: source, eventId: before.eventId });
  });

  it('MCP get_webhook_delivery shows the same replays', async () => {
    const { endpointId } = await heldEndpoint();
    const source = await publishHeld(endpointId, 'mcp-1');
    await enable(endpointId);
    const replay = await api.call('POST', `${ws()}/webhooks/deliveries/${source}/replay`);
    expect(replay.status).toBe(202);
    const mcp = new Client({ name: 'replay-links', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(api.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${api.token}` } } }),
    );
    pipeline.stops.push(() => mcp.close());
    const got = await mcp.callTool({ name: 'get_webhook_delivery', arguments: { slug: api.workspace, deliveryId: source } });
    expect(got.isError ?? false).toBe(false);
    expect(got.structuredContent).toMatchObject({
      deliveryId: source,
      replays: [{ deliveryId: replay.body.deliveryId, createdAt: replay.body.createdAt }],
    });
  });
});
