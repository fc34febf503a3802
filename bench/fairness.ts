/**
 * The fairness scenario (docs/behaviour.md#delivery-lanes): healthy workspaces publish at a steady
 * rate to the benchmark's receiver, first alone (the baseline), then while one more workspace's
 * receiver never answers (it accepts the connection and stays silent, so every attempt waits out
 * the 10 s deadline) and gets 10 % of the deliveries. It reports, for the healthy workspaces,
 * deliveries per second and publish-to-receipt percentiles in both runs, and their ratio.
 *
 * The black-hole workspace has {@link BLACK_HOLE_ENDPOINTS} endpoints, each receiving every one of
 * its events. Few endpoints keep its deliveries spread over time, as one busy receiver's would be
 * (a batch of the delivery queue then rarely lacks one); more than one keeps every endpoint under
 * the auto-disable threshold for the whole run, so the black hole stays a black hole from start to
 * end (a single endpoint would be disabled after 20 timeouts and hurt nobody after that, which
 * would flatter the figures). Its first deliveries run in the fast lane, as nothing knows yet
 * that it never answers: the run includes that.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { LocalStack } from '../bin/local/stack';
import { loadHandler } from '../bin/local/lambda-loader';
import { ensureWorkspace, issueToken } from '#lambdas/operations/admin';
import { DISABLE_THRESHOLD } from '#lambdas/contract/limits';
import { busEvent, EVENT_TYPE, type Percentiles, type Publisher } from './pipeline';
import { runAs } from './usage';
import type { ReceiverProcess } from './receiver-process';
import { nowMs, quantile, sleep } from './stats';

/** Endpoints of the black-hole workspace (see the module comment). */
const BLACK_HOLE_ENDPOINTS = 4;
/** Healthy workspaces, one endpoint each. */
const HEALTHY_WORKSPACES = 3;
/** The black hole's share of all deliveries. */
const BLACK_HOLE_SHARE = 0.1;

/** One run of the scenario, as the healthy workspaces saw it. */
interface FairnessRun {
  readonly healthyDeliveries: number;
  /** Healthy deliveries received before the run's time bound. */
  readonly received: number;
  /** Received / (first publish → last healthy receipt), per second. */
  readonly deliveredPerSecond: number;
  readonly latencyMs: Percentiles;
  /** Black-hole deliveries published in the run. */
  readonly blackHoleDeliveries: number;
}

/** The scenario's result. */
export interface FairnessResult {
  readonly lanes: 'slow lane' | 'one lane';
  readonly healthyRatePerSecond: number;
  readonly seconds: number;
  readonly baseline: FairnessRun;
  readonly withBlackHole: FairnessRun;
  /** withBlackHole / baseline healthy deliveries per second. */
  readonly throughputRatio: number;
  /** The goal: ratio at least 0.8 and p99 under 2 s. */
  readonly meetsGoal: boolean;
}

/** A TCP server that accepts every connection and never answers (closed at the end of the scenario). */
async function blackHole(): Promise<{ url: string; stop(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}

async function createEndpoint(stack: LocalStack, workspace: string, token: string, url: string): Promise<void> {
  const res = await fetch(`${stack.apiUrl}/workspaces/${workspace}/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url, eventTypes: [EVENT_TYPE], description: 'fairness scenario' }),
  });
  if (res.status !== 201) throw new Error(`creating an endpoint in ${workspace} answered ${res.status}: ${await res.text()}`);
}

async function workspaceWithEndpoints(stack: LocalStack, slug: string, url: string, count: number): Promise<void> {
  await ensureWorkspace(stack.table, slug, slug);
  const { token } = await issueToken(stack.table, slug, { name: 'bench', scopes: ['admin'] });
  for (let i = 0; i < count; i++) await createEndpoint(stack, slug, token, url);
}

/**
 * Runs the scenario on a running stack: `healthyRatePerSecond` deliveries/s spread over the healthy
 * workspaces for `seconds`, without and then with the black hole.
 */
export async function fairnessScenario(
  stack: LocalStack,
  receiver: ReceiverProcess,
  options: { healthyRatePerSecond: number; seconds: number; lanes: FairnessResult['lanes'] },
): Promise<FairnessResult> {
  const publisher = await loadHandler<Publisher>('publisher');
  const hole = await blackHole();
  try {
    const run = `f${Date.now().toString(36)}`;
    const healthy = Array.from({ length: HEALTHY_WORKSPACES }, (_, i) => `${run}-healthy-${i + 1}`);
    for (const slug of healthy) await workspaceWithEndpoints(stack, slug, `${receiver.url}/hook`, 1);
    const blackHoleWorkspace = `${run}-black-hole`;
    await workspaceWithEndpoints(stack, blackHoleWorkspace, hole.url, BLACK_HOLE_ENDPOINTS);

    let index = 0;
    const publish = async (workspace: string) => {
      const i = index++;
      // As the publisher function, so its log lines are counted and kept off the terminal (bench/usage.ts).
      return (await runAs('publisher', () => publisher(busEvent(workspace, i)))).deliveryIds;
    };

    const once = async (withBlackHole: boolean, seconds = options.seconds): Promise<FairnessRun> => {
      await receiver.reset();
      const publishedAt = new Map<string, number>();
      const healthyGap = 1000 / options.healthyRatePerSecond;
      // Deliveries: the black hole's share of all, each of its events making BLACK_HOLE_ENDPOINTS of them.
      const blackHoleEventsPerSecond = (options.healthyRatePerSecond * BLACK_HOLE_SHARE) / (1 - BLACK_HOLE_SHARE) / BLACK_HOLE_ENDPOINTS;
      const healthyCount = Math.round(options.healthyRatePerSecond * seconds);
      const blackHoleCount = withBlackHole ? Math.max(1, Math.round(blackHoleEventsPerSecond * seconds)) : 0;
      const schedule = [
        ...Array.from({ length: healthyCount }, (_, i) => ({ at: i * healthyGap, workspace: healthy[i % healthy.length]!, healthy: true })),
        ...Array.from({ length: blackHoleCount }, (_, i) => ({
          at: (i + 0.5) * (1000 / blackHoleEventsPerSecond),
          workspace: blackHoleWorkspace,
          healthy: false,
        })),
      ].sort((a, b) => a.at - b.at);
      let blackHoleDeliveries = 0;
      const started = nowMs();
      const inFlight: Promise<void>[] = [];
      for (const item of schedule) {
        const wait = started + item.at - nowMs();
        if (wait > 1) await sleep(wait);
        const at = nowMs();
        inFlight.push(
          publish(item.workspace).then((ids) => {
            if (item.healthy) for (const id of ids) publishedAt.set(id, at);
            else blackHoleDeliveries += ids.length;
          }),
        );
      }
      await Promise.all(inFlight);
      // Every healthy delivery received, or the bound.
      const deadline = nowMs() + 120_000;
      let dump = await receiver.dump();
      while ([...publishedAt.keys()].some((id) => dump.firstReceipt[id] === undefined) && nowMs() < deadline) {
        await sleep(250);
        dump = await receiver.dump();
      }
      const latencies: number[] = [];
      let last = started;
      for (const [id, at] of publishedAt) {
        const got = dump.firstReceipt[id];
        if (got === undefined) continue;
        latencies.push(got - at);
        last = Math.max(last, got);
      }
      return {
        healthyDeliveries: publishedAt.size,
        received: latencies.length,
        deliveredPerSecond: latencies.length / ((last - started) / 1000),
        latencyMs: {
          p50: quantile(latencies, 0.5),
          p90: quantile(latencies, 0.9),
          p99: quantile(latencies, 0.99),
          max: quantile(latencies, 1),
          samples: latencies.length,
        },
        blackHoleDeliveries,
      };
    };

    // Warm the handlers and connections first, so the baseline is not also the warm-up.
    await once(false, Math.min(5, options.seconds));
    const baseline = await once(false);
    const withBlackHole = await once(true);
    const throughputRatio = withBlackHole.deliveredPerSecond / baseline.deliveredPerSecond;
    return {
      lanes: options.lanes,
      healthyRatePerSecond: options.healthyRatePerSecond,
      seconds: options.seconds,
      baseline,
      withBlackHole,
      throughputRatio,
      meetsGoal: throughputRatio >= 0.8 && withBlackHole.latencyMs.p99 < 2000 && withBlackHole.received === withBlackHole.healthyDeliveries,
    };
  } finally {
    await hole.stop();
  }
}

/** Why the black hole's endpoints are not disabled during the run (printed with the figures). */
export function fairnessNote(r: FairnessResult): string {
  const perEndpoint = r.withBlackHole.blackHoleDeliveries / BLACK_HOLE_ENDPOINTS;
  return `black hole: ${r.withBlackHole.blackHoleDeliveries} deliveries over ${BLACK_HOLE_ENDPOINTS} endpoints (${perEndpoint.toFixed(0)} each, under the auto-disable threshold of ${DISABLE_THRESHOLD})`;
}
