/**
 * A recovery whose window is empty once `until` is capped at now (a `since` in the future), as
 * the fuzz found it: it matches nothing (never a 500 from the store's key range).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
let endpointId: string;
const ws = () => `/workspaces/${api.workspace}`;

beforeAll(async () => {
  api = await startTestApi({ timeScale: 1000, schedules: false });
  const created = await api.call('POST', `${ws()}/webhooks`, {
    body: { url: 'https://hooks.example.com/window', eventTypes: ['webhook.test_event'] },
  });
  endpointId = created.body.endpointId;
});
afterAll(async () => {
  await api?.close();
});

describe('a recovery window that is empty after until is capped at now', () => {
  const future = new Date(Date.now() + 365 * 86_400_000).toISOString();
  const later = new Date(Date.now() + 400 * 86_400_000).toISOString();

  it.each([
    ['since in the future, no until', { since: future }],
    ['since and until in the future (until capped at now)', { since: future, until: later }],
  ])('%s: a dry run matches nothing', async (_name, window) => {
    const res = await api.call('POST', `${ws()}/webhooks/${endpointId}/recover`, {
      body: { ...window, statuses: ['failed'], dryRun: true },
    });
    expect([res.status, res.body]).toEqual([200, { matched: 0, matchedAtLeast: false, skippedReplayed: 0 }]);
  });

  it('since in the future: the job completes with nothing replayed', async () => {
    const res = await api.call('POST', `${ws()}/webhooks/${endpointId}/recover`, { body: { since: future } });
    expect(res.status).toBe(202);
    let job = res.body;
    for (let i = 0; i < 100 && job.status === 'running'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      job = (await api.call('GET', `${ws()}/jobs/${job.jobId}`)).body;
    }
    expect(job).toMatchObject({ status: 'completed', matched: 0, replayed: 0 });
  });
});
