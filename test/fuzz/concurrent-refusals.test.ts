/**
 * Races the fuzz found: the same mutation sent several times at once. One wins; the others
 * are the operation's declared refusal (not found), never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
const ws = () => `/workspaces/${api.workspace}`;

beforeAll(async () => {
  const quota = { limit: 100_000, windowSeconds: 60 };
  api = await startTestApi({ schedules: false, rateLimits: JSON.stringify({ rest_read: quota, rest_write: quota }) });
});
afterAll(async () => {
  await api?.close();
});

describe('the same mutation sent at once', () => {
  it('revoking one token 8 times at once: one 204, the rest 404 TokenNotFound', async () => {
    for (let round = 0; round < 3; round++) {
      const created = await api.call('POST', `${ws()}/api-tokens`, { body: { name: `race ${round}`, scopes: ['read'] } });
      expect(created.status).toBe(201);
      const answers = await Promise.all(Array.from({ length: 8 }, () => api.call('DELETE', `${ws()}/api-tokens/${created.body.tokenId}`)));
      const outcomes = answers.map((a) => `${a.status} ${a.body?.tag ?? ''}`.trim()).sort();
      expect(outcomes).toEqual(['204', ...Array.from({ length: 7 }, () => '404 TokenNotFound')]);
    }
    // One audit event per revocation that happened.
    const audit = await api.call('GET', `${ws()}/audit-events?limit=200`);
    expect(audit.body.items.filter((a: { action: string }) => a.action === 'api_token.revoked')).toHaveLength(3);
  });

  it('deleting one endpoint 8 times at once: one 204, the rest 404 EndpointNotFound', async () => {
    const created = await api.call('POST', `${ws()}/webhooks`, {
      body: { url: 'https://hooks.example.com/race', eventTypes: ['webhook.test_event'], enabled: false },
    });
    expect(created.status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 8 }, () => api.call('DELETE', `${ws()}/webhooks/${created.body.endpointId}`)));
    const outcomes = answers.map((a) => `${a.status} ${a.body?.tag ?? ''}`.trim()).sort();
    expect(outcomes).toEqual(['204', ...Array.from({ length: 7 }, () => '404 EndpointNotFound')]);
  });
});
