/** Webhook endpoints through the real local API: create, list, page, get, update, rotate, delete. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
const base = () => `/workspaces/${api.workspace}`;
const SECRET = /whsec_[A-Za-z0-9+/=]+/;

beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

async function createEndpoint(url = 'https://hooks.example.com/a', eventTypes = ['webhook.test_event']) {
  const res = await api.call('POST', `${base()}/webhooks`, { body: { url, eventTypes } });
  expect(res.status).toBe(201);
  return res.body as { endpointId: string; url: string; enabled: boolean };
}

describe('create', () => {
  it('returns 201 with the endpoint and no secret, and writes audit webhook.created', async () => {
    const res = await api.call('POST', `${base()}/webhooks`, {
      body: { url: 'https://hooks.example.com/in', eventTypes: ['webhook.test_event', 'webhook.created'], description: 'primary' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      url: 'https://hooks.example.com/in',
      eventTypes: ['webhook.test_event', 'webhook.created'],
      description: 'primary',
      enabled: true,
      consecutiveFailures: 0,
    });
    expect(res.body.endpointId).toMatch(/^whe_[0-9A-Z]{26}$/);
    expect(res.text).not.toMatch(SECRET);
    expect(Object.keys(res.body).sort()).toEqual([
      'auth',
      'consecutiveFailures',
      'createdAt',
      'description',
      'enabled',
      'endpointId',
      'eventTypes',
      'filter',
      'headers',
      'health',
      'rateLimitPerSecond',
      'updatedAt',
      'url',
    ]);
    // No option set: each reads as none.
    expect(res.body).toMatchObject({ headers: {}, auth: null, rateLimitPerSecond: null, filter: null });
    expect(res.body.health).toEqual({ successRate24h: null, lastAttemptAt: null });
    const audit = await api.call('GET', `${base()}/audit-events?limit=5`);
    expect(audit.body.items.map((a: { action: string; targetId: string }) => [a.action, a.targetId])).toContainEqual([
      'webhook.created',
      res.body.endpointId,
    ]);
  });

  it('refuses an unknown event type with a 400 that names it, and writes nothing', async () => {
    const before = await api.call('GET', `${base()}/overview`);
    const res = await api.call('POST', `${base()}/webhooks`, {
      body: { url: 'https://hooks.example.com/x', eventTypes: ['webhook.test_event', 'order.cancelled'] },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.body.tag).toBe('UnknownEventType');
    expect(res.body.detail).toContain('order.cancelled');
    const after = await api.call('GET', `${base()}/overview`);
    expect(after.body.webhooks.total).toBe(before.body.webhooks.total);
  });

  it('accepts a type from config/event-types.json (no code change) and lists it with its JSON Schema', async () => {
    const res = await api.call('POST', `${base()}/webhooks`, {
      body: { url: 'https://hooks.example.com/orders', eventTypes: ['order.shipped'] },
    });
    expect(res.status).toBe(201);
    const types = await api.call('GET', `${base()}/event-types`);
    expect(types.body.items).toContainEqual(
      expect.objectContaining({ name: 'order.shipped', builtIn: false, payloadSchema: expect.objectContaining({ required: ['orderId'] }) }),
    );
  });

  it.each([
    ['http://hooks.example.com/x', 'scheme'],
    ['https://user:pw@hooks.example.com/x', 'credentials'],
    ['https://hooks.localhost/x', 'localhost'],
    ['https://intranet/x', 'single_label'],
    ['https://10.1.2.3/x', 'ip_not_public'],
    ['https://0x0a.1/x', 'ip_not_public'],
    ['https://167772161/x', 'ip_not_public'],
    ['https://[::ffff:169.254.169.254]/x', 'ip_not_public'],
  ])('refuses %s with 400 InvalidWebhookUrl (%s)', async (url, rule) => {
    const res = await api.call('POST', `${base()}/webhooks`, { body: { url, eventTypes: ['webhook.test_event'] } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ tag: 'InvalidWebhookUrl', rule, status: 400 });
    expect(res.body.detail.length).toBeGreaterThan(10);
  });

  it('allows loopback targets in the local stack only (development switch)', async () => {
    const res = await api.call('POST', `${base()}/webhooks`, {
      body: { url: 'http://127.0.0.1:9999/hook', eventTypes: ['webhook.test_event'] },
    });
    expect(res.status).toBe(201);
    const priv = await api.call('POST', `${base()}/webhooks`, {
      body: { url: 'http://192.168.1.1/hook', eventTypes: ['webhook.test_event'] },
    });
    expect(priv.status).toBe(400);
  });
});

describe('get, update, delete', () => {
  it('PATCH changes only the fields sent, validates the URL again and audits', async () => {
    const ep = await createEndpoint('https://hooks.example.com/patch', ['webhook.test_event', 'webhook.deleted']);
    const res = await api.call('PATCH', `${base()}/webhooks/${ep.endpointId}`, { body: { enabled: false } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      enabled: false,
      url: 'https://hooks.example.com/patch',
      eventTypes: ['webhook.test_event', 'webhook.deleted'],
    });

    const bad = await api.call('PATCH', `${base()}/webhooks/${ep.endpointId}`, { body: { url: 'https://169.254.169.254/latest' } });
    expect(bad.status).toBe(400);
    expect(bad.body.tag).toBe('InvalidWebhookUrl');

    const url = await api.call('PATCH', `${base()}/webhooks/${ep.endpointId}`, {
      body: { url: 'https://hooks.example.com/new', description: 'moved' },
    });
    expect(url.body).toMatchObject({ url: 'https://hooks.example.com/new', description: 'moved', enabled: false });

    const got = await api.call('GET', `${base()}/webhooks/${ep.endpointId}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(url.body);

    const unknownField = await api.call('PATCH', `${base()}/webhooks/${ep.endpointId}`, { body: { secret: 'whsec_x' } });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.tag).toBe('ValidationError');

    const audit = await api.call('GET', `${base()}/audit-events?limit=10`);
    const updates = audit.body.items.filter(
      (a: { action: string; targetId: string }) => a.action === 'webhook.updated' && a.targetId === ep.endpointId,
    );
    expect(updates).toHaveLength(2);
  });

  it('DELETE answers 204, then the endpoint is gone (404) and the delete is audited', async () => {
    const ep = await createEndpoint();
    const del = await api.call('DELETE', `${base()}/webhooks/${ep.endpointId}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    const got = await api.call('GET', `${base()}/webhooks/${ep.endpointId}`);
    expect(got.status).toBe(404);
    expect(got.body.tag).toBe('EndpointNotFound');
    const again = await api.call('DELETE', `${base()}/webhooks/${ep.endpointId}`);
    expect(again.status).toBe(404);
    const audit = await api.call('GET', `${base()}/audit-events?limit=5`);
    expect(audit.body.items[0]).toMatchObject({ action: 'webhook.deleted', targetId: ep.endpointId });
  });
});

describe('rotate secret', () => {
  it('returns a whsec_ secret of 32 bytes once, keeps at most two, and never shows it elsewhere', async () => {
    const ep = await createEndpoint();
    const first = await api.call('POST', `${base()}/webhooks/${ep.endpointId}/rotate-secret`);
    expect(first.status).toBe(200);
    expect(first.body.endpointId).toBe(ep.endpointId);
    expect(first.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(first.body.secret.slice(6), 'base64')).toHaveLength(32);
    const window = Date.parse(first.body.previousSecretExpiresAt) - Date.now();
    expect(window).toBeGreaterThan(23.9 * 3600_000);
    expect(window).toBeLessThanOrEqual(24 * 3600_000);

    const second = await api.call('POST', `${base()}/webhooks/${ep.endpointId}/rotate-secret`);
    expect(second.body.secret).not.toBe(first.body.secret);

    const { getEndpointRecord } = await import('../../lambdas/store/endpoints');
    const record = await getEndpointRecord(api.table, api.workspace, ep.endpointId);
    // Kept sealed (docs/architecture.md#secrets): two of them, neither in plaintext.
    expect(record!.secrets).toHaveLength(2);
    expect(JSON.stringify(record)).not.toMatch(SECRET);

    // No other response of the API carries a secret.
    for (const path of [
      `/webhooks`,
      `/webhooks/${ep.endpointId}`,
      `/audit-events?limit=200`,
      `/overview`,
      `/notifications`,
      `/api-tokens`,
    ]) {
      const res = await api.call('GET', `${base()}${path}`);
      expect(res.status).toBe(200);
      expect(res.text).not.toMatch(SECRET);
    }
    const patched = await api.call('PATCH', `${base()}/webhooks/${ep.endpointId}`, { body: { description: 'x' } });
    expect(patched.text).not.toMatch(SECRET);
    const audit = await api.call('GET', `${base()}/audit-events?limit=3`);
    expect(audit.body.items.map((a: { action: string }) => a.action)).toContain('webhook.secret_rotated');
  });

  it('404 for an endpoint of no one', async () => {
    const res = await api.call('POST', `${base()}/webhooks/whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC/rotate-secret`);
    expect(res.status).toBe(404);
    expect(res.body.tag).toBe('EndpointNotFound');
  });
});

describe('lists', () => {
  it('pages endpoints forward on id with a null cursor on the last page', async () => {
    const slugBase = `${base()}/webhooks`;
    for (let i = 0; i < 3; i++) await createEndpoint(`https://hooks.example.com/page-${i}`);
    const all: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { status: number; body: { items: { endpointId: string }[]; nextCursor: string | null } } = await api.call(
        'GET',
        `${slugBase}?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      all.push(...res.body.items.map((e: { endpointId: string }) => e.endpointId));
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor && pages < 50);
    expect(all).toEqual([...all].sort());
    expect(new Set(all).size).toBe(all.length);
    const whole = await api.call('GET', `${slugBase}?limit=200`);
    expect(whole.body.items.map((e: { endpointId: string }) => e.endpointId)).toEqual(all);
    expect(whole.body.nextCursor).toBeNull();
  });

  it.each([
    ['0', 1],
    ['-5', 1],
    ['abc', 50],
    ['1.9', 1],
    ['100000', 200],
  ])('clamps limit=%s instead of failing', async (limit, expected) => {
    const res = await api.call('GET', `${base()}/audit-events?limit=${limit}`);
    expect(res.status).toBe(200);
    expect(res.body.items.length).toBeLessThanOrEqual(expected);
  });

  it('a cursor that does not decode gives an empty page', async () => {
    for (const cursor of ['garbage', 'WyJ4IiwieSJd', '%%%', Buffer.from('[1,2]').toString('base64url')]) {
      const res = await api.call('GET', `${base()}/webhooks?cursor=${encodeURIComponent(cursor)}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ items: [], nextCursor: null });
    }
  });

  it('lists event types, members, notifications, tokens and the overview', async () => {
    const types = await api.call('GET', `${base()}/event-types`);
    expect(types.body.items.map((t: { name: string }) => t.name)).toContain('webhook.test_event');
    expect(types.body.items[0].payloadSchema.type).toBe('object');
    const members = await api.call('GET', `${base()}/members`);
    expect(members.body.items).toEqual([expect.objectContaining({ email: 'owner@example.com', role: 'owner' })]);
    const notifications = await api.call('GET', `${base()}/notifications`);
    expect(notifications.body).toEqual({ items: [], nextCursor: null });
    const overview = await api.call('GET', `${base()}/overview`);
    expect(overview.body).toMatchObject({ workspace: { slug: api.workspace }, members: 1, apiTokens: 1 });
    expect(overview.body.webhooks.total).toBe(overview.body.webhooks.enabled + overview.body.webhooks.disabled);
  });
});

describe('reference documents', () => {
  it('serves /openapi.json generated from the contract, with this server as its base URL', async () => {
    const res = await api.call('GET', '/openapi.json', { token: null });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.servers).toEqual([{ url: api.apiUrl }]);
    expect(res.body.paths['/workspaces/{slug}/webhooks'].post.operationId).toBe('createWebhook');
  });

  it('serves /reference and its self-hosted assets', async () => {
    const page = await api.call('GET', '/reference', { token: null });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.text).toContain('reference/swagger-ui-bundle.js');
    expect(page.text).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/);
    const js = await fetch(`${api.apiUrl}/reference/swagger-ui-bundle.js`);
    expect(js.status).toBe(200);
    expect((await js.text()).length).toBeGreaterThan(100_000);
  });
});
