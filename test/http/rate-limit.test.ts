/** Rate limits through the real local API: per token, 429 with Retry-After, DynamoDB counters. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { issueToken } from '../../lambdas/operations/admin';
import { startTestApi, type TestApi } from '../helpers/local-api';

let api: TestApi;

beforeAll(async () => {
  api = await startTestApi({
    rateLimits: JSON.stringify({ rest_read: { limit: 3, windowSeconds: 3600 }, rest_write: { limit: 1, windowSeconds: 3600 } }),
  });
});
afterAll(async () => {
  await api?.close();
});

it('refuses the request past the quota with 429 RateLimited and Retry-After, per token and per bucket', async () => {
  const path = `/workspaces/${api.workspace}/webhooks`;
  for (let i = 0; i < 3; i++) expect((await api.call('GET', path)).status).toBe(200);
  const limited = await api.call('GET', path);
  expect(limited.status).toBe(429);
  expect(limited.headers.get('content-type')).toBe('application/problem+json');
  expect(limited.body.tag).toBe('RateLimited');
  const retryAfter = Number(limited.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(3600);

  // Another bucket of the same token is counted apart.
  const write = await api.call('POST', path, { body: { url: 'https://hooks.example.com/rl', eventTypes: ['webhook.test_event'] } });
  expect(write.status).toBe(201);
  expect((await api.call('POST', path, { body: { url: 'https://hooks.example.com/rl', eventTypes: ['webhook.test_event'] } })).status).toBe(
    429,
  );

  // Another token has its own window.
  const { token } = await issueToken(api.table, api.workspace, { name: 'other', scopes: ['read'] });
  expect((await api.call('GET', path, { token })).status).toBe(200);
});
