/**
 * Contract fuzzing against the real local stack: requests generated from the
 * contract's schemas (valid, boundary and hostile values, wrong types, huge and deep bodies,
 * odd headers and encodings, every route with every method), sent raw over loopback. Every
 * answer is judged (test/fuzz/oracle.ts: no 5xx, a refusal is well-formed problem+json with a
 * declared status, a success matches the operation's schema), and a batch of refused requests
 * must leave the workspace exactly as it was (its items, idempotency records, deliveries).
 *
 * Reproduce a run with FUZZ_SEED=<seed> (printed in the test name and in every failure).
 * FUZZ_RUNS sets the number of requests (default 1,500: part of `npm test`), FUZZ_TIME_MS
 * the wall-time bound; `npm run fuzz` runs 10,000 and requires all of them.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../lambdas/contract/errors';
import { declaredErrors, operationById } from '../../lambdas/contract/operations';
import { ensureWorkspace } from '../../lambdas/operations/admin';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { scriptedReceiver } from '../helpers/scripted-receiver';
import { judge, KNOWN_FINDINGS, UNDECLARED_BUT_SENSIBLE, type Asked, type Violation } from './oracle';
import { NoAnswerError, rawRequest, type WireResponse } from './raw-http';
import { diff, workspaceState, type WorkspaceState } from './workspace-state';
import {
  caseArbitrary,
  expectationOf,
  materialize,
  routeOf,
  type FuzzCase,
  type FuzzEnv,
  type Pool,
  type TokenRef,
  type WireRequest,
} from './requests';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
const RUNS = Number(process.env.FUZZ_RUNS ?? 1500);
const TIME_MS = Number(process.env.FUZZ_TIME_MS ?? (RUNS > 2000 ? 30 * 60_000 : 50_000));
const REQUIRE_ALL = process.env.FUZZ_REQUIRE_ALL === '1';
/** Requests per batch: the unit of the "a refusal changes nothing" check. */
const BATCH = 20;
/** Requests in flight at once within a batch. */
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 8);
/** Bodies over the gateway's 10 MiB limit cost 10 MiB each: a few per run. */
const OVERSIZE_BUDGET = 12;

const REPRO = `FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} npx vitest run test/fuzz/contract-fuzz.test.ts`;

let api: TestApi;
let receiver: Awaited<ReturnType<typeof scriptedReceiver>>;
let env: FuzzEnv & { pools: Record<Pool, string[]> };
let port: number;
const pipelineErrors: string[] = [];
let state: WorkspaceState;
const snapshot = () => state.snapshot();
const settle = () => state.settle();

/** One finding of the run, with the request that caused it. */
interface Finding extends Violation {
  readonly request: string;
  readonly answer: string;
}

function describeRequest(c: FuzzCase, wire: WireRequest): string {
  const headers = wire.headers.map(
    ([k, v]) => `${k}: ${(typeof v === 'string' ? v : v.toString('latin1')).replace(env.tokens.admin, '<admin token>').slice(0, 120)}`,
  );
  const body = wire.body ? ` body(${wire.body.length} B)=${JSON.stringify(wire.body.subarray(0, 200).toString('utf8'))}` : '';
  return `[${c.family}${wire.raw ? ', raw' : ''}] ${wire.method} ${wire.target.slice(0, 300)} {${headers.join(' | ')}}${body}`;
}

function describeAnswer(res: WireResponse | null, error?: unknown): string {
  if (!res) return `no answer: ${String(error)}`;
  return `${res.status} ${res.headers['content-type'] ?? ''} ${JSON.stringify(res.body.subarray(0, 300).toString('utf8'))}`;
}

async function send(wire: WireRequest): Promise<WireResponse> {
  if (wire.raw) {
    const { buildRawRequest } = await import('./raw-http');
    const hasLength = wire.headers.some(([k]) => k === 'transfer-encoding' || k === 'content-length');
    const headers: (readonly [string, string | Buffer])[] = [['host', `127.0.0.1:${port}`], ...wire.headers];
    if (wire.body && !hasLength) headers.push(['content-length', String(wire.body.length)]);
    headers.push(['connection', 'close']);
    return rawRequest(
      port,
      buildRawRequest({ method: wire.method, target: wire.target, headers, ...(wire.body ? { body: wire.body } : {}) }),
      30_000,
    );
  }
  const headers = new Headers();
  for (const [k, v] of wire.headers) headers.append(k, typeof v === 'string' ? v : v.toString('latin1'));
  const res = await fetch(`${api.apiUrl}${wire.target}`, {
    method: wire.method,
    headers,
    ...(wire.body ? { body: new Uint8Array(wire.body) } : {}),
    redirect: 'manual',
    signal: AbortSignal.timeout(30_000),
  });
  const out: Record<string, string> = {};
  res.headers.forEach((value, key) => (out[key] = value));
  return { status: res.status, headers: out, body: Buffer.from(await res.arrayBuffer()) };
}

// ——— setup ———

beforeAll(async () => {
  receiver = await scriptedReceiver((req, res) => {
    res.writeHead(req.path.startsWith('/gone') ? 410 : 204).end();
  });
  const quota = { limit: 1_000_000, windowSeconds: 60 };
  api = await startTestApi({
    timeScale: 1000,
    schedules: false,
    rateLimits: JSON.stringify({ rest_read: quota, rest_write: quota, mcp: quota }),
    onPipelineError: (where, e) => pipelineErrors.push(`[${where}] ${String(e)}`),
  });
  port = Number(new URL(api.apiUrl).port);
  const ws = `/workspaces/${api.workspace}`;
  const ok = async (method: string, path: string, body?: unknown) => {
    const res = await api.call(method, `${ws}${path}`, body === undefined ? {} : { body });
    if (res.status >= 300) throw new Error(`setup ${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  state = workspaceState(api, (await ok('GET', '/overview')).caller.tokenId);
  await ensureWorkspace(api.table, 'other', 'Another workspace');
  const tokens = {} as Record<TokenRef, string>;
  tokens.admin = api.token;
  tokens.read = (await ok('POST', '/api-tokens', { name: 'fuzz read', scopes: ['read'] })).token;
  tokens.narrow = (await ok('POST', '/api-tokens', { name: 'fuzz narrow', scopes: ['webhook:list'] })).token;
  const revoked = await ok('POST', '/api-tokens', { name: 'fuzz revoked', scopes: ['admin'] });
  await ok('DELETE', `/api-tokens/${revoked.tokenId}`);
  tokens.revoked = revoked.token;
  const minted = await ok('POST', '/api-tokens', { name: 'fuzz minted', scopes: ['write'] });
  tokens.minted = minted.token;

  const hook = `http://127.0.0.1:${receiver.port}`;
  const e1 = await ok('POST', '/webhooks', { url: `${hook}/hook`, eventTypes: ['webhook.test_event'] });
  const e2 = await ok('POST', '/webhooks', { url: `${hook}/off`, eventTypes: ['webhook.test_event'], enabled: false });
  const e3 = await ok('POST', '/webhooks', { url: `${hook}/gone`, eventTypes: ['webhook.test_event'] });
  const d1 = await ok('POST', `/webhooks/${e1.endpointId}/test-event`);
  const d3 = await ok('POST', `/webhooks/${e3.endpointId}/test-event`);
  // An endpoint the fuzz cannot address (not in its pool), so its failed deliveries stay replayable
  // until their replays' failures disable it.
  const e4 = await ok('POST', '/webhooks', { url: `${hook}/gone/kept`, eventTypes: ['webhook.test_event'] });
  const failed = [];
  for (let i = 0; i < 3; i++) failed.push((await ok('POST', `/webhooks/${e4.endpointId}/test-event`)).deliveryId as string);
  await settle();
  const job = await ok('POST', `/webhooks/${e3.endpointId}/recover`, { since: '2020-01-01T00:00:00Z' });
  await settle();
  env = {
    slug: api.workspace,
    tokens,
    pools: {
      endpoint: [e1.endpointId, e2.endpointId, e3.endpointId],
      delivery: [d1.deliveryId, d3.deliveryId, ...failed],
      token: [minted.tokenId, revoked.tokenId],
      job: [job.jobId],
      cursor: [],
    },
  };
}, 120_000);

afterAll(async () => {
  await api?.close();
  await receiver?.stop();
});

/** Adds what a success handed out to the pools later cases address. */
function learn(asked: Asked, json: unknown): void {
  const body = json as Record<string, unknown> | undefined;
  if (!body || !asked.op) return;
  const add = (pool: Pool, value: unknown) => {
    if (typeof value !== 'string' || env.pools[pool].includes(value)) return;
    env.pools[pool].push(value);
    if (env.pools[pool].length > 200) env.pools[pool].shift();
  };
  switch (asked.op.operationId) {
    case 'createWebhook':
      add('endpoint', body.endpointId);
      break;
    case 'createApiToken':
      add('token', body.tokenId);
      break;
    case 'sendWebhookTestEvent':
    case 'replayWebhookDelivery':
      add('delivery', body.deliveryId);
      break;
    case 'recoverWebhookDeliveries':
      add('job', body.jobId);
      break;
  }
  if (typeof body.nextCursor === 'string') add('cursor', body.nextCursor);
}

// ——— the run ———

describe(`contract fuzz (seed ${SEED}, ${RUNS} requests, ${TIME_MS / 1000} s)`, () => {
  it(
    `answers every generated request as the contract says, and refusals change nothing (FUZZ_SEED=${SEED})`,
    async () => {
      const started = Date.now();
      const findings: Finding[] = [];
      const stats = {
        sent: 0,
        batches: 0,
        stateChecks: 0,
        checkedRequests: 0,
        oversize: 0,
        byFamily: new Map<string, number>(),
        byStatus: new Map<string, number>(),
        undeclared: new Map<string, number>(),
        known: new Map<string, number>(),
        successes: 0,
        sendMs: 0,
        stateMs: 0,
      };
      const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
      let baseline = await snapshot();

      const arbitrary = fc.array(
        caseArbitrary({
          slug: env.slug,
          receiverPort: receiver.port,
          eventTypes: [
            'webhook.test_event',
            ...(await api.call('GET', `/workspaces/${env.slug}/event-types`)).body.items
              .map((t: { name: string }) => t.name)
              .filter((n: string) => n !== 'webhook.test_event'),
          ],
          allowOversize: true,
        }),
        {
          minLength: BATCH,
          maxLength: BATCH,
        },
      );

      const result = await fc.check(
        fc.asyncProperty(arbitrary, async (batch) => {
          if (stats.sent >= RUNS || Date.now() - started > TIME_MS) return true;
          stats.batches++;
          const planned = batch.map((c) => {
            let wire = materialize(c, env);
            if (wire.body && wire.body.length > 10 * 1024 * 1024 && ++stats.oversize > OVERSIZE_BUDGET)
              wire = { ...wire, body: wire.body.subarray(0, 1_000_000) };
            const op = routeOf(wire.method, wire.target);
            const dryRun = (() => {
              try {
                return (
                  op?.dryRun !== undefined &&
                  (JSON.parse(wire.body?.toString('utf8') ?? 'null') as { dryRun?: unknown } | null)?.dryRun === true
                );
              } catch {
                return false;
              }
            })();
            const path = (() => {
              try {
                return new URL(wire.target, 'http://localhost').pathname;
              } catch {
                return '';
              }
            })();
            const asked: Asked = { method: wire.method, ...(op ? { op } : {}), dryRun, extraRoute: /^\/(mcp|local\/events)$/.test(path) };
            return { c, wire, asked, path, expectation: expectationOf(c, wire, env, op) };
          });
          // Phase one: the requests the contract says must be refused; then the state must not have moved.
          // Phase two: the rest (valid ones may succeed and change things: the pipeline settles after).
          const mustRefuse = planned.filter((p) => p.expectation && !p.expectation.successAllowed);
          const rest = planned.filter((p) => !(p.expectation && !p.expectation.successAllowed));
          for (const phase of [mustRefuse, rest]) {
            if (!phase.length) continue;
            let mutated = false;
            const sendStarted = Date.now();
            const outcomes = new Array<string>(phase.length);
            let next = 0;
            await Promise.all(
              Array.from({ length: CONCURRENCY }, async () => {
                while (next < phase.length) {
                  const i = next++;
                  const { c, wire, asked, path, expectation } = phase[i]!;
                  stats.sent++;
                  bump(stats.byFamily, c.family);
                  let res: WireResponse | null = null;
                  try {
                    res = await send(wire);
                  } catch (e) {
                    findings.push({
                      rule: e instanceof NoAnswerError ? 'no-answer' : 'transport',
                      detail: String(e),
                      request: describeRequest(c, wire),
                      answer: describeAnswer(null, e),
                    });
                    outcomes[i] = 'no answer';
                    continue;
                  }
                  const verdict = judge(asked, res);
                  bump(
                    stats.byStatus,
                    `${asked.op?.operationId ?? (asked.extraRoute ? 'extra route' : 'no route')} ${res.status}${verdict.tag ? ` ${verdict.tag}` : ''}`,
                  );
                  if (verdict.undeclared) bump(stats.undeclared, `${asked.op?.operationId} ${verdict.tag}`);
                  const violations = [...verdict.violations];
                  if (expectation && res.status < 500) {
                    const success = res.status >= 200 && res.status < 300;
                    const ok =
                      asked.method === 'HEAD'
                        ? // No body to read the tag from: the status must be one of the expected tags'.
                          (success && expectation.successAllowed) || expectation.tags.some((t) => ERROR_STATUS[t] === res.status)
                        : verdict.tag === null
                          ? success && expectation.successAllowed
                          : expectation.tags.includes(verdict.tag);
                    // A body over 10 MiB (or headers over 16 KiB) is refused before anything else is looked at.
                    if (!ok && res.status !== 413) {
                      violations.push({
                        rule: 'expected',
                        detail: `${expectation.why}: expected ${expectation.successAllowed ? 'success or ' : ''}${expectation.tags.join('/')}, got ${res.status} ${verdict.tag ?? ''}`,
                      });
                    }
                  }
                  for (const v of violations) {
                    const known = KNOWN_FINDINGS.find((k) => k.matches(asked, path, v));
                    if (known) bump(stats.known, known.id);
                    else findings.push({ ...v, request: describeRequest(c, wire), answer: describeAnswer(res) });
                  }
                  if (res.status < 300 && res.status >= 200) {
                    stats.successes++;
                    if (!asked.op || !asked.op.readOnly) mutated = true;
                    learn(asked, verdict.json);
                  }
                  outcomes[i] = `${res.status}${verdict.tag ? ` ${verdict.tag}` : ''}`;
                }
              }),
            );
            stats.sendMs += Date.now() - sendStarted;
            const stateStarted = Date.now();
            if (mutated) {
              baseline = await settle();
            } else {
              stats.stateChecks++;
              stats.checkedRequests += phase.length;
              const after = await snapshot();
              const changed = diff(baseline, after);
              if (changed) {
                findings.push({
                  rule: 'refusal-changed-state',
                  detail: changed,
                  request: phase.map((p, i) => `${describeRequest(p.c, p.wire)} → ${outcomes[i]}`).join('\n    '),
                  answer: 'every request of the group was refused or read-only',
                });
                baseline = await settle();
              } else {
                baseline = after;
              }
            }
            stats.stateMs += Date.now() - stateStarted;
          }
          return true;
        }),
        { seed: SEED, numRuns: Math.ceil(RUNS / BATCH), interruptAfterTimeLimit: TIME_MS + 5_000, markInterruptAsFailure: false },
      );

      const seconds = (Date.now() - started) / 1000;
      const table = [...stats.byStatus].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `    ${String(n).padStart(6)}  ${k}`);
      console.log(
        [
          `contract fuzz: seed ${SEED}, ${stats.sent} requests in ${stats.batches} batches, ${seconds.toFixed(1)} s (${(stats.sent / seconds).toFixed(0)}/s)`,
          `  ${stats.successes} successes; ${stats.stateChecks} groups of refused or read-only requests (${stats.checkedRequests} requests) left the workspace unchanged; ${Math.min(stats.oversize, OVERSIZE_BUDGET)} bodies over 10 MiB`,
          `  by family: ${[...stats.byFamily].map(([k, n]) => `${k} ${n}`).join(', ')}`,
          `  time: ${(stats.sendMs / 1000).toFixed(1)} s sending, ${(stats.stateMs / 1000).toFixed(1)} s reading and settling the workspace`,
          `  undeclared but allowed (${UNDECLARED_BUT_SENSIBLE.join(', ')}): ${[...stats.undeclared].map(([k, n]) => `${k} ×${n}`).join(', ') || 'none'}`,
          `  known findings (reported, not failing): ${[...stats.known].map(([k, n]) => `${k} ×${n}`).join(', ') || 'none'}`,
          `  pipeline errors: ${pipelineErrors.length}`,
          `  answers by operation and status:`,
          ...table,
          `  reproduce: ${REPRO}`,
        ].join('\n'),
      );

      // One line per distinct finding (rule and operation), with the first request that showed it.
      const distinct = new Map<string, Finding & { count: number }>();
      for (const f of findings) {
        const key = `${f.rule} ${f.request.split(' ')[1] ?? ''} ${f.detail.slice(0, 60)}`;
        const seen = distinct.get(key);
        if (seen) seen.count++;
        else distinct.set(key, { ...f, count: 1 });
      }
      const report = [...distinct.values()]
        .slice(0, 25)
        .map((f) => `  ${f.rule} (×${f.count}): ${f.detail}\n    request: ${f.request}\n    answer:  ${f.answer}`)
        .join('\n');
      expect(result.failed, `fast-check failed (seed ${SEED}): ${String(result.errorInstance)}`).toBe(false);
      expect(findings.length, `${findings.length} findings (seed ${SEED}; reproduce: ${REPRO}):\n${report}`).toBe(0);
      expect(pipelineErrors, `pipeline errors during the fuzz (seed ${SEED})`).toEqual([]);
      if (REQUIRE_ALL)
        expect(
          stats.sent,
          `the run stopped at its time bound (${TIME_MS} ms) after ${stats.sent} of ${RUNS} requests`,
        ).toBeGreaterThanOrEqual(RUNS);
    },
    TIME_MS + 120_000,
  );
});

describe('former findings (each failed until fixed; a new finding joins here as `it.fails`)', () => {
  // Was a finding: the REST handler answers 415 UnsupportedMediaType for a non-JSON body sent
  // with a non-JSON content type (lambdas/http/rest-handler.ts), and now every operation with a
  // body declares it (lambdas/contract/operations.ts declaredErrors; so does the OpenAPI document).
  it('a refusal for a body sent as a form is one the operation declares', async () => {
    const def = operationById('createWebhook')!;
    const res = await api.call('POST', `/workspaces/${env.slug}/webhooks`, {
      rawBody: 'url=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(415);
    expect(declaredErrors(def)).toContain(res.body.tag);
  });

  // Known finding: MCP refusals (lambdas/mcp/gate.ts problem()) carry no `cache-control: no-store`,
  // which docs/behaviour.md#problem-documents promises on every error.
  it('an MCP refusal carries cache-control: no-store', async () => {
    const res = await fetch(api.mcpUrl, { method: 'PUT', headers: { authorization: `Bearer ${api.token}` } });
    expect(res.status).toBe(405);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });
});
