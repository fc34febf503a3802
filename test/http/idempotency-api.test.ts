/**
 * `Idempotency-Key` through the real local stack (docs/behaviour.md#idempotency-keys): a repeat
 * answers the first response with `Idempotent-Replayed: true` and does nothing again; another
 * body under the key is 422; another token's key is its own; a bad key is 400; a failed first
 * attempt may be retried; a repeated test send queues one delivery.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { usePipelineApi, type ApiResponse, type TestApi } from '../helpers/local-api';
import { scriptedReceiver } from '../helpers/scripted-receiver';

let api: TestApi;
const ws = () => `/workspaces/${api.workspace}`;
const pipeline = usePipelineApi();
const { stops } = pipeline;

beforeAll(() => {
  api = pipeline.api;
});

/** How long the pipeline gets to reach a state, and how often it is looked at. */
const EVENTUALLY = { timeout: 15_000, interval: 25 };

const withKey = (key: string, token?: string) => ({ headers: { 'Idempotency-Key': key }, ...(token ? { token } : {}) });

function expectProblem(res: ApiResponse, status: number, tag: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/problem+json');
  expect(res.body).toMatchObject({ status, tag, type: `urn:problem:webhooks:${tag}` });
}

async function endpointsWithUrl(url: string) {
  const list = await api.call('GET', `${ws()}/webhooks?limit=100`);
  expect(list.status).toBe(200);
  return (list.body.items as { endpointId: string; url: string }[]).filter((e) => e.url === url);
}

describe('create endpoint with an Idempotency-Key', () => {
  it('answers a repeat with the first endpoint and creates only one', async () => {
    const url = 'https://hooks.example.com/idem-once';
    const body = { url, eventTypes: ['webhook.test_event'] };
    const first = await api.call('POST', `${ws()}/webhooks`, { body, ...withKey('create-1') });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();

    // The same body with its keys in another order is the same request.
    const again = await api.call('POST', `${ws()}/webhooks`, {
      rawBody: JSON.stringify({ eventTypes: body.eventTypes, url }),
      ...withKey('create-1'),
    });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);

    expect((await endpointsWithUrl(url)).map((e) => e.endpointId)).toEqual([first.body.endpointId]);
    const audit = await api.call('GET', `${ws()}/audit-events?limit=100`);
    const created = (audit.body.items as { action: string; targetId: string }[]).filter(
      (a) => a.action === 'webhook.created' && a.targetId === first.body.endpointId,
    );
    expect(created).toHaveLength(1);
  });

  it('refuses the same key with another body (422), and creates nothing for it', async () => {
    const first = await api.call('POST', `${ws()}/webhooks`, {
      body: { url: 'https://hooks.example.com/idem-a', eventTypes: ['webhook.test_event'] },
      ...withKey('create-2'),
    });
    expect(first.status).toBe(201);
    const other = await api.call('POST', `${ws()}/webhooks`, {
      body: { url: 'https://hooks.example.com/idem-b', eventTypes: ['webhook.test_event'] },
      ...withKey('create-2'),
    });
    expectProblem(other, 422, 'IdempotencyKeyReused');
    expect(other.body.detail).toContain('Idempotency-Key');
    expect(await endpointsWithUrl('https://hooks.example.com/idem-b')).toEqual([]);
  });

  it("keeps another token's same key independent", async () => {
    const minted = await api.call('POST', `${ws()}/api-tokens`, { body: { name: 'idem-other', scopes: ['read', 'webhook:write'] } });
    expect(minted.status).toBe(201);
    const url = 'https://hooks.example.com/idem-tokens';
    const body = { url, eventTypes: ['webhook.test_event'] };
    const mine = await api.call('POST', `${ws()}/webhooks`, { body, ...withKey('shared-key') });
    const theirs = await api.call('POST', `${ws()}/webhooks`, { body, ...withKey('shared-key', minted.body.token as string) });
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.endpointId).not.toBe(mine.body.endpointId);
    expect(await endpointsWithUrl(url)).toHaveLength(2);
  });

  it.each([
    ['too long', 'k'.repeat(256)],
    ['not printable ASCII', 'clé'],
    ['a control character', 'a\tb'],
  ])('refuses a key that is %s (400 naming the header)', async (_what, key) => {
    const url = `https://hooks.example.com/idem-bad-${key.length}`;
    const res = await api.call('POST', `${ws()}/webhooks`, { body: { url, eventTypes: ['webhook.test_event'] }, ...withKey(key) });
    expectProblem(res, 400, 'ValidationError');
    expect(res.body.detail).toContain('Idempotency-Key');
    expect(res.body.issues).toEqual([expect.objectContaining({ path: 'header.Idempotency-Key' })]);
    expect(await endpointsWithUrl(url)).toEqual([]);
  });

  it('accepts a 255-character key', async () => {
    const res = await api.call('POST', `${ws()}/webhooks`, {
      body: { url: 'https://hooks.example.com/idem-long', eventTypes: ['webhook.test_event'] },
      ...withKey('k'.repeat(255)),
    });
    expect(res.status).toBe(201);
  });
});

describe('recover with an Idempotency-Key', () => {
  it('answers a repeated dry run from the first answer, and refuses another window under the key', async () => {
    const created = await api.call('POST', `${ws()}/webhooks`, {
      body: { url: 'https://hooks.example.com/idem-recover', eventTypes: ['webhook.test_event'] },
    });
    const path = `${ws()}/webhooks/${created.body.endpointId}/recover`;
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const first = await api.call('POST', path, { body: { since, dryRun: true }, ...withKey('recover-1') });
    expect(first.status).toBe(200);
    const again = await api.call('POST', path, { body: { since, dryRun: true }, ...withKey('recover-1') });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expectProblem(await api.call('POST', path, { body: { since, dryRun: false }, ...withKey('recover-1') }), 422, 'IdempotencyKeyReused');
  });
});

describe('test send with an Idempotency-Key', () => {
  it('queues one delivery for a repeated send', async () => {
    const r = await scriptedReceiver((_req, res) => res.writeHead(200).end('ok'));
    stops.push(() => r.stop());
    const created = await api.call('POST', `${ws()}/webhooks`, { body: { url: r.url, eventTypes: ['webhook.test_event'] } });
    const endpointId = created.body.endpointId as string;

    const first = await api.call('POST', `${ws()}/webhooks/${endpointId}/test-event`, withKey('send-1'));
    const again = await api.call('POST', `${ws()}/webhooks/${endpointId}/test-event`, withKey('send-1'));
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.deliveryId).toBe(first.body.deliveryId);

    await vi.waitFor(async () => {
      expect((await api.call('GET', `${ws()}/webhooks/deliveries/${first.body.deliveryId}`)).body.status).toBe('delivered');
    }, EVENTUALLY);
    const deliveries = await api.call('GET', `${ws()}/webhooks/${endpointId}/deliveries`);
    expect(deliveries.body.items.map((d: { deliveryId: string }) => d.deliveryId)).toEqual([first.body.deliveryId]);
    expect(r.seen).toHaveLength(1);

    // The same key on another endpoint's send is another request.
    const other = await api.call('POST', `${ws()}/webhooks`, { body: { url: r.url, eventTypes: ['webhook.test_event'] } });
    expectProblem(
      await api.call('POST', `${ws()}/webhooks/${other.body.endpointId}/test-event`, withKey('send-1')),
      422,
      'IdempotencyKeyReused',
    );
  });

  it('stores no failure: a refused first attempt may be retried with the same key', async () => {
    const created = await api.call('POST', `${ws()}/webhooks`, {
      body: { url: 'https://hooks.example.com/idem-disabled', eventTypes: ['webhook.test_event'], enabled: false },
    });
    const endpointId = created.body.endpointId as string;
    expectProblem(await api.call('POST', `${ws()}/webhooks/${endpointId}/test-event`, withKey('send-2')), 409, 'EndpointDisabled');
    expect((await api.call('PATCH', `${ws()}/webhooks/${endpointId}`, { body: { enabled: true } })).status).toBe(200);
    const retried = await api.call('POST', `${ws()}/webhooks/${endpointId}/test-event`, withKey('send-2'));
    expect(retried.status).toBe(202);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
  });
});
