/**
 * The fuzz's small portion with real quotas (its own stack: quotas are per process): generated
 * requests past a token's quota are 429 RateLimited, well-formed (Retry-After included), and
 * change nothing. The main fuzz runs with generous quotas so that 429s do not mask findings.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeKind } from '../../lambdas/contract/operations';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { scriptedReceiver } from '../helpers/scripted-receiver';
import { judge } from './oracle';
import { buildRawRequest, rawRequest, type WireResponse } from './raw-http';
import { caseArbitrary, expectationOf, materialize, routeOf, type FuzzEnv, type TokenRef, type WireRequest } from './requests';
import { diff, workspaceState } from './workspace-state';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
/** Small quotas, so a few dozen requests exhaust them. */
const QUOTAS = { rest_read: { limit: 12, windowSeconds: 3600 }, rest_write: { limit: 6, windowSeconds: 3600 } };

let api: TestApi;
let receiver: Awaited<ReturnType<typeof scriptedReceiver>>;
let port: number;

beforeAll(async () => {
  receiver = await scriptedReceiver((_req, res) => res.writeHead(204).end());
  api = await startTestApi({ schedules: false, rateLimits: JSON.stringify(QUOTAS) });
  port = Number(new URL(api.apiUrl).port);
});
afterAll(async () => {
  await api?.close();
  await receiver?.stop();
});

async function send(wire: WireRequest): Promise<WireResponse> {
  const headers: (readonly [string, string | Buffer])[] = [['host', `127.0.0.1:${port}`], ...wire.headers];
  if (wire.body) headers.push(['content-length', String(wire.body.length)]);
  headers.push(['connection', 'close']);
  return rawRequest(
    port,
    buildRawRequest({ method: wire.method, target: wire.target, headers, ...(wire.body ? { body: wire.body } : {}) }),
    30_000,
  );
}

describe(`rate-limited fuzz (seed ${SEED})`, () => {
  it(`answers generated requests past the quota with well-formed 429s that change nothing (FUZZ_SEED=${SEED})`, async () => {
    const overview = await api.call('GET', `/workspaces/${api.workspace}/overview`);
    const state = workspaceState(api, overview.body.caller.tokenId);
    // Only the admin token is used, so one token's buckets run dry; the other token refs are never generated here.
    const tokens = Object.fromEntries(
      (['admin', 'read', 'narrow', 'revoked', 'minted'] as TokenRef[]).map((t) => [t, api.token]),
    ) as Record<TokenRef, string>;
    const env: FuzzEnv = { slug: api.workspace, tokens, pools: { endpoint: [], delivery: [], token: [], job: [], cursor: [] } };
    const cases = fc.sample(
      caseArbitrary({ slug: api.workspace, receiverPort: receiver.port, eventTypes: ['webhook.test_event'], allowOversize: false }),
      { seed: SEED, numRuns: 150 },
    );

    // Exhaust both buckets, judging every answer on the way.
    const problems: string[] = [];
    let limited = 0;
    for (const c of cases.slice(0, 90)) {
      const wire = materialize({ ...c, raw: true }, env);
      const op = routeOf(wire.method, wire.target);
      const res = await send(wire);
      const verdict = judge({ method: wire.method, ...(op ? { op } : {}), extraRoute: /^\/(mcp|local\/events)/.test(wire.target) }, res);
      for (const v of verdict.violations)
        if (v.rule !== 'problem-headers' || !/^\/(mcp|local)/.test(wire.target))
          problems.push(`${wire.method} ${wire.target.slice(0, 100)} → ${res.status}: ${v.rule} ${v.detail}`);
      if (verdict.tag === 'RateLimited') limited++;
    }
    expect(problems, `seed ${SEED}`).toEqual([]);
    expect(limited, `seed ${SEED}: no request was rate limited`).toBeGreaterThan(0);

    // Past the quota: every request that reaches the rate limit is refused with 429, and nothing changes.
    const before = await state.settle();
    let checked = 0;
    for (const c of cases.slice(90)) {
      const wire = materialize({ ...c, raw: true }, env);
      const op = routeOf(wire.method, wire.target);
      const res = await send(wire);
      const verdict = judge({ method: wire.method, ...(op ? { op } : {}), extraRoute: /^\/(mcp|local\/events)/.test(wire.target) }, res);
      const expectation = expectationOf(c, wire, env, op);
      // The checks before the rate limit (docs/behaviour.md#check-order) still refuse first.
      const before429 = ['Unauthorized', 'WorkspaceNotFound', 'RouteNotFound', 'PayloadTooLarge'];
      // A request line the front refuses as too large (413) never reaches the token or the rate limit.
      const refusedAtFront = res.status === 413 && verdict.tag === 'PayloadTooLarge';
      // A platform route refuses an unsigned request at the gateway (403), before any bucket: only token routes are charged here.
      if (
        op &&
        routeKind(op) === 'token' &&
        expectation &&
        !expectation.tags.some((t) => before429.includes(t)) &&
        wire.method !== 'HEAD' &&
        !refusedAtFront
      ) {
        checked++;
        expect([wire.method, wire.target.slice(0, 100), res.status, verdict.tag], `seed ${SEED}`).toEqual([
          wire.method,
          wire.target.slice(0, 100),
          429,
          'RateLimited',
        ]);
        expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
      expect(
        res.status < 200 || res.status >= 300 || !op || op.readOnly,
        `seed ${SEED}: ${wire.method} ${wire.target} succeeded past the quota`,
      ).toBe(true);
    }
    expect(checked).toBeGreaterThan(0);
    expect(diff(before, await state.snapshot()), `seed ${SEED}: rate-limited requests changed the workspace`).toBeNull();
  }, 120_000);
});
