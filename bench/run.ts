/**
 * `npm run bench`: one run against the local stack and a loopback receiver.
 *
 * Prints deliveries per second through publish → dispatch → record next to
 * the raw POST rate of one process to the same receiver (the ceiling) and
 * their ratio; p50/p99 publish-to-receipt latency; DynamoDB capacity units
 * per first-try delivered event (from ConsumedCapacity); the minified bundle
 * size and cold init time of each Lambda; the fairness scenario (bench/fairness.ts: healthy
 * workspaces' throughput and latency while one workspace's receiver never answers). Writes
 * `.local/bench-results.json`.
 *
 * Everything it starts (DynamoDB Local, the stack, the receiver process) is
 * stopped on the way out, also on failure or Ctrl-C.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startLocalStack, type LocalStack } from '../bin/local/stack';
import { meterCapacity } from './capacity';
import { measureLambdas, SDK_PLACEMENTS, type SdkPlacement } from './lambdas';
import { DISPATCHER_CONSUMER, dispatcherConsumer } from '#lambdas/contract/deployment';
import { MAX_CONNECTIONS_PER_TARGET } from '#lambdas/pipeline/http-sender';
import { fairnessNote, fairnessScenario, type FairnessResult } from './fairness';
import {
  CALL_MIX,
  dynamoDbCallMixRate,
  EVENT_TYPE,
  payloadOf,
  PipelineDriver,
  setPayloadBytes,
  type CallMixResult,
  type PhaseResult,
} from './pipeline';
import { rawPostRate, type RawResult } from './raw';
import { startReceiverProcess, type ReceiverProcess } from './receiver-process';
import { median, round, table } from './stats';
import { costModel, payloadOwnUnits, receiverLatencyCost, type CostModel, type PhaseCounts } from './cost';
import { pipelineFunctionSettings, type FunctionSettings } from './deployed';
import { PRICE_SOURCES, PRICES_AS_OF } from './prices';
import { UsageMeter } from './usage';
import { TABLE_TARGET_UTILIZATION_PERCENT } from '../lib/constructs/table';

const PROJECT_ROOT = fileURLToPath(new URL('../', import.meta.url));
const RESULTS_FILE = join(PROJECT_ROOT, '.local', 'bench-results.json');

const HELP = `Usage: npm run bench -- [options]
  --events <n>               events in the measured throughput run (default 2000)
  --warmup <n>               events published and drained before measuring (default 200)
  --publish-concurrency <n>  concurrent publisher invocations in the throughput run (default 8)
  --latency-events <n>       events in the paced latency run (default 300)
  --latency-rate <n>         events/s of the paced run (default: half the measured pipeline rate)
  --init-runs <n>            cold loads per Lambda bundle, median taken (default 3)
  --sdk <list>               the bundles' AWS SDK, comma-separated: per-function (bundled but for what the
                             function can never load, as deployed; default), external (the runtime's copy),
                             bundled (all of it), split (bundled but for every module loaded on first use);
                             with more than one, each function is built every way, timed back to back, and
                             compared with the first (no no-maps runs)
  --only <names>             only these lambdas/functions/*.ts, comma-separated
  --payload-bytes <n>        JSON size of every event's payload (default 1024)
  --dispatcher-batch-size <n>  the stage setting dispatcherBatchSize (default 25; 10 or less: no batching window)
  --sweep-payload-bytes <list> payload sizes of the sweep after the main run, comma-separated (default 1024,16384,65536)
  --sweep-events <n>         events per payload size in the sweep (default 200)
  --skip-sweep               no payload-size sweep
  --skip-lambdas             no bundle sizes / cold init
  --skip-pipeline            no stack: bundle sizes / cold init only
  --fairness-rate <n>        healthy deliveries/s in the fairness scenario (default 15)
  --fairness-seconds <n>     length of each fairness run, s (default 30)
  --fairness-only            only the fairness scenario (no bundles, no other phases)
  --skip-fairness            no fairness scenario
  --one-lane                 run the stack without its slow lane (the single-queue pipeline, for comparison)
  --help                     this text`;

function positiveInt(raw: string | undefined, fallback: number, flag: string): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${flag} must be a positive integer, got "${raw}"`);
  return n;
}

/** The `--sdk` choice as the placements to measure. */
function sdkPlacements(raw: string | undefined): SdkPlacement[] {
  const list = (raw ?? 'per-function').split(',').map((p) => p.trim());
  for (const p of list)
    if (!(SDK_PLACEMENTS as readonly string[]).includes(p)) throw new Error(`--sdk takes ${SDK_PLACEMENTS.join(', ')}, got "${p}"`);
  return [...new Set(list)] as SdkPlacement[];
}

function parseCommandLine() {
  const { values } = parseArgs({
    options: {
      events: { type: 'string' },
      warmup: { type: 'string' },
      'publish-concurrency': { type: 'string' },
      'latency-events': { type: 'string' },
      'latency-rate': { type: 'string' },
      'init-runs': { type: 'string' },
      sdk: { type: 'string' },
      only: { type: 'string' },
      'payload-bytes': { type: 'string' },
      'dispatcher-batch-size': { type: 'string' },
      'sweep-payload-bytes': { type: 'string' },
      'sweep-events': { type: 'string' },
      'skip-sweep': { type: 'boolean' },
      'skip-lambdas': { type: 'boolean' },
      'skip-pipeline': { type: 'boolean' },
      'fairness-rate': { type: 'string' },
      'fairness-seconds': { type: 'string' },
      'fairness-only': { type: 'boolean' },
      'skip-fairness': { type: 'boolean' },
      'one-lane': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  return {
    help: values.help ?? false,
    skipLambdas: (values['skip-lambdas'] ?? false) || (values['fairness-only'] ?? false),
    fairnessOnly: values['fairness-only'] ?? false,
    skipFairness: values['skip-fairness'] ?? false,
    oneLane: values['one-lane'] ?? false,
    fairnessRate: positiveInt(values['fairness-rate'], 15, '--fairness-rate'),
    fairnessSeconds: positiveInt(values['fairness-seconds'], 30, '--fairness-seconds'),
    skipPipeline: values['skip-pipeline'] ?? false,
    events: positiveInt(values.events, 2000, '--events'),
    warmup: positiveInt(values.warmup, 200, '--warmup'),
    publishConcurrency: positiveInt(values['publish-concurrency'], 8, '--publish-concurrency'),
    latencyEvents: positiveInt(values['latency-events'], 300, '--latency-events'),
    latencyRate: values['latency-rate'] === undefined ? undefined : positiveInt(values['latency-rate'], 1, '--latency-rate'),
    initRuns: positiveInt(values['init-runs'], 3, '--init-runs'),
    sdk: sdkPlacements(values.sdk),
    only: values.only?.split(',').map((n) => n.trim()),
    payloadBytes: positiveInt(values['payload-bytes'], 1024, '--payload-bytes'),
    dispatcherBatchSize: positiveInt(values['dispatcher-batch-size'], DISPATCHER_CONSUMER.batchSize, '--dispatcher-batch-size'),
    sweepPayloadBytes: values['skip-sweep']
      ? []
      : (values['sweep-payload-bytes'] ?? '1024,16384,65536').split(',').map((v) => positiveInt(v.trim(), 1024, '--sweep-payload-bytes')),
    sweepEvents: positiveInt(values['sweep-events'], 200, '--sweep-events'),
  };
}

let args: ReturnType<typeof parseCommandLine>;
try {
  args = parseCommandLine();
} catch (e) {
  console.error(`${(e as Error).message}\n\n${HELP}`);
  process.exit(2);
}
if (args.help) {
  console.log(HELP);
  process.exit(0);
}
const EVENTS = args.events;
const WARMUP = args.warmup;
const PUBLISH_CONCURRENCY = args.publishConcurrency;
const LATENCY_EVENTS = args.latencyEvents;
const LATENCY_RATE = args.latencyRate;
const INIT_RUNS = args.initRuns;
setPayloadBytes(args.payloadBytes);
/** The dispatcher's in-flight maximum: maxConcurrency 4 batches × batchSize 25 (docs/architecture.md#dispatcher). */
const PIPELINE_IN_FLIGHT = 100;
/** The dispatcher's connections per receiver address (its https pools, lambdas/pipeline/http-sender.ts). */
const SENDER_CONNECTIONS = MAX_CONNECTIONS_PER_TARGET;

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/** Lambda, SQS, EventBridge, logs and KMS, counted per phase (bench/usage.ts). */
const usage = new UsageMeter();

/** Stoppers of whatever is running, newest first. */
const cleanups: (() => Promise<void>)[] = [];
async function cleanUp(): Promise<void> {
  while (cleanups.length > 0) {
    const stop = cleanups.pop()!;
    await stop().catch((e: unknown) => log(`cleanup failed: ${(e as Error).message}`));
  }
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping what the bench started…`);
    void cleanUp().finally(() => process.exit(130));
  });
}

interface PipelineFigures {
  /** The measured phases; absent with --fairness-only. */
  readonly phases?: PhaseFigures;
  /** Absent with --skip-fairness. */
  readonly fairness?: FairnessResult;
}

interface PhaseFigures {
  readonly warmup: PhaseResult;
  readonly throughput: PhaseResult;
  readonly latency: PhaseResult & { readonly ratePerSecond: number; readonly batchSize: number };
  /** The same paced run with the other batching rule (batch 10, no window; or 25 with its 1 s window). */
  readonly otherLatency: PhaseResult & { readonly ratePerSecond: number; readonly batchSize: number };
  readonly raw: RawResult;
  readonly rawSenderConnections: RawResult;
  /** The better of the two raw runs: the ceiling. */
  readonly ceiling: RawResult;
  readonly dynamoDbCallMix: CallMixResult;
  /** The same closed-loop run at each payload size of the sweep (after the rest: the paced runs are not disturbed). */
  readonly sweep: PhaseResult[];
  /** Endpoint options (docs/scaling.md#endpoint-options): a rate limit the endpoint never reaches, and subscribers whose filter matches nothing. */
  readonly options: { readonly rateLimited: PhaseResult; readonly unmatchedFilters: PhaseResult };
  readonly pipelineErrorSamples: string[];
}

/** The rate limit of the options phase: one the closed loop never reaches, so only the budget's own cost shows. */
const OPTIONS_RATE_LIMIT = 1000;
/** Subscribers added for the filter phase, each with a filter no event matches. */
const UNMATCHED_FILTERS = 10;

async function runPipeline(): Promise<PipelineFigures> {
  const receiver: ReceiverProcess = await startReceiverProcess();
  cleanups.push(() => receiver.stop());
  log(`receiver pid ${receiver.pid} on ${receiver.url}`);

  // The deployed log level (ServiceFunction's POWERTOOLS_LOG_LEVEL), so the log bytes the cost model counts are a stage's;
  // and a trace id in the environment as Lambda sets it, which every log line then carries.
  process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
  process.env._X_AMZN_TRACE_ID ??= 'Root=1-674a1b2c-0123456789abcdef01234567;Parent=0123456789abcdef;Sampled=1';
  usage.captureLogs();
  cleanups.push(async () => usage.releaseLogs());
  const dataDir = mkdtempSync(join(tmpdir(), 'webhooks-bench-'));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const errorSamples: string[] = [];
  /** Pipeline errors of the current phase (the driver clears it when a phase starts). */
  const pipelineErrors: string[] = [];
  const stack: LocalStack = await startLocalStack({
    port: 0,
    dataDir,
    inMemory: true,
    tableName: 'webhooks-bench',
    writeStackFile: false,
    timeScale: 1,
    schedules: false,
    slowLane: !args.oneLane,
    dispatcherBatchSize: args.dispatcherBatchSize,
    instrument: usage.instrument(),
    onPipelineError: (where, e) => {
      pipelineErrors.push(`${where}: ${(e as Error).message}`);
      if (errorSamples.length < 5) errorSamples.push(`${where}: ${(e as Error).message}`);
    },
  });
  let stopped = false;
  cleanups.push(async () => {
    await stack.stop();
    stopped = true;
  });
  // Last resort if this process dies without running the cleanups: DynamoDB Local (Java) would outlive it.
  process.once('exit', () => {
    if (!stopped && stack.dynamoDbPid) {
      try {
        process.kill(stack.dynamoDbPid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
  log(`stack on ${stack.apiUrl}, DynamoDB Local pid ${stack.dynamoDbPid} at ${stack.dynamoDbEndpoint}`);

  // Imported only now: its logger reads POWERTOOLS_LOG_LEVEL (WARN, set by the stack) when the module loads.
  const { defaultRuntime } = await import('#lambdas/composition/runtime');
  // Every handler of this process shares defaultRuntime()'s client: meter it.
  const meter = meterCapacity(defaultRuntime().deps.table.doc);
  const phases = args.fairnessOnly ? undefined : await measuredPhases(stack, receiver, meter, pipelineErrors, errorSamples);
  let fairness: FairnessResult | undefined;
  if (!args.skipFairness) {
    log(
      `fairness: ${args.fairnessRate} healthy deliveries/s for ${args.fairnessSeconds} s, alone and with a black-hole workspace (${args.oneLane ? 'one lane' : 'slow lane'})…`,
    );
    fairness = await fairnessScenario(stack, receiver, {
      healthyRatePerSecond: args.fairnessRate,
      seconds: args.fairnessSeconds,
      lanes: args.oneLane ? 'one lane' : 'slow lane',
    });
  }
  return { phases, fairness };
}

async function measuredPhases(
  stack: LocalStack,
  receiver: ReceiverProcess,
  meter: ReturnType<typeof meterCapacity>,
  pipelineErrors: string[],
  errorSamples: string[],
): Promise<PhaseFigures> {
  const driver = new PipelineDriver(stack, receiver, meter, pipelineErrors, usage);
  const endpointId = await driver.createEndpoint();

  log(`warm-up: ${WARMUP} events…`);
  const warmup = await driver.phase({ events: WARMUP, concurrency: PUBLISH_CONCURRENCY, timeoutMs: 120_000, firstIndex: 0 });

  log(`raw ceiling: ${EVENTS} POSTs, ${PIPELINE_IN_FLIGHT} in flight…`);
  const rawOptions = { url: receiver.url, count: EVENTS, concurrency: PIPELINE_IN_FLIGHT, eventType: EVENT_TYPE, payload: payloadOf };
  await rawPostRate({ ...rawOptions, count: Math.min(500, EVENTS), connections: PIPELINE_IN_FLIGHT }); // warm-up
  const raw = await rawPostRate({ ...rawOptions, connections: PIPELINE_IN_FLIGHT });
  const rawSenderConnections = await rawPostRate({ ...rawOptions, connections: SENDER_CONNECTIONS });

  log(`throughput: ${EVENTS} events, ${PUBLISH_CONCURRENCY} concurrent publishers…`);
  const throughput = await driver.phase({
    events: EVENTS,
    concurrency: PUBLISH_CONCURRENCY,
    timeoutMs: 120_000 + EVENTS * 200,
    firstIndex: WARMUP,
  });
  if (throughput.timedOut) log('throughput run timed out before the queue drained');

  const mixEvents = Math.min(EVENTS, 600);
  log(`DynamoDB Local alone: the pipeline's calls for ${mixEvents} events…`);
  const dynamoDbCallMix = await dynamoDbCallMixRate(stack, mixEvents, PUBLISH_CONCURRENCY + PIPELINE_IN_FLIGHT);

  const ratePerSecond = LATENCY_RATE ?? Math.max(10, Math.round(throughput.deliveredPerSecond / 2));
  log(`latency: ${LATENCY_EVENTS} events paced at ${ratePerSecond}/s…`);
  const latency = await driver.phase({
    events: LATENCY_EVENTS,
    ratePerSecond,
    timeoutMs: 120_000 + (LATENCY_EVENTS / ratePerSecond) * 1000,
    firstIndex: WARMUP + EVENTS,
  });

  // The same paced run with the other batching rule: batches of 10 or less leave at once, over 10 wait up to 1 s.
  const otherBatchSize = args.dispatcherBatchSize > 10 ? 10 : DISPATCHER_CONSUMER.batchSize;
  log(`latency: ${LATENCY_EVENTS} events paced at ${ratePerSecond}/s, dispatcher batches of ${otherBatchSize}…`);
  stack.queues.deliveries.reconfigure(dispatcherConsumer(otherBatchSize, DISPATCHER_CONSUMER.maxConcurrency));
  const otherLatency = await driver.phase({
    events: LATENCY_EVENTS,
    ratePerSecond,
    timeoutMs: 120_000 + (LATENCY_EVENTS / ratePerSecond) * 1000,
    firstIndex: WARMUP + EVENTS + LATENCY_EVENTS,
  });
  stack.queues.deliveries.reconfigure(dispatcherConsumer(args.dispatcherBatchSize, DISPATCHER_CONSUMER.maxConcurrency));

  // The units per delivery at each payload size (docs/scaling.md#by-payload-size), the same closed loop with fewer events.
  const sweep: PhaseResult[] = [];
  let next = WARMUP + EVENTS + 2 * LATENCY_EVENTS;
  for (const bytes of args.sweepPayloadBytes) {
    setPayloadBytes(bytes);
    log(`payload sweep: ${args.sweepEvents} events of ${bytes} bytes…`);
    sweep.push(
      await driver.phase({
        events: args.sweepEvents,
        concurrency: PUBLISH_CONCURRENCY,
        timeoutMs: 120_000 + args.sweepEvents * 200,
        firstIndex: next,
      }),
    );
    next += args.sweepEvents;
  }
  setPayloadBytes(args.payloadBytes);

  // Endpoint options, at the sweep's size: what the rate budget and unmatched filters add per delivery.
  const optionsPhase = async () => {
    const result = await driver.phase({
      events: args.sweepEvents,
      concurrency: PUBLISH_CONCURRENCY,
      timeoutMs: 120_000 + args.sweepEvents * 200,
      firstIndex: next,
    });
    next += args.sweepEvents;
    return result;
  };
  log(`endpoint options: ${args.sweepEvents} events to the endpoint limited to ${OPTIONS_RATE_LIMIT}/s…`);
  await driver.updateEndpoint(endpointId, { rateLimitPerSecond: OPTIONS_RATE_LIMIT });
  const rateLimited = await optionsPhase();
  await driver.updateEndpoint(endpointId, { rateLimitPerSecond: null });
  log(`endpoint options: ${args.sweepEvents} events, ${UNMATCHED_FILTERS} more subscribers whose filter matches none…`);
  const filtered = await Promise.all(
    Array.from({ length: UNMATCHED_FILTERS }, (_, i) =>
      driver.createEndpoint({ description: `filter matching nothing ${i}`, filter: { 'bench.unmatched': i } }),
    ),
  );
  const unmatchedFilters = await optionsPhase();
  for (const id of filtered) await driver.deleteEndpoint(id);

  const ceiling = raw.perSecond >= rawSenderConnections.perSecond ? raw : rawSenderConnections;
  return {
    warmup,
    throughput,
    latency: { ...latency, ratePerSecond, batchSize: args.dispatcherBatchSize },
    otherLatency: { ...otherLatency, ratePerSecond, batchSize: otherBatchSize },
    raw,
    rawSenderConnections,
    ceiling,
    dynamoDbCallMix,
    sweep,
    options: { rateLimited, unmatchedFilters },
    pipelineErrorSamples: errorSamples,
  };
}

/** Endpoint options against the throughput run: capacity per first-try delivery, by stage. */
function printOptions(p: PhaseFigures): void {
  const { rateLimited, unmatchedFilters } = p.options;
  console.log(
    `\n== Endpoint options: DynamoDB units per first-try delivery (${rateLimited.events} events each, ${rateLimited.payloadBytes} bytes, 1 endpoint receiving) ==`,
  );
  const units = (r: PhaseResult, stage: string) => {
    const per = Math.max(1, r.firstTryDelivered);
    const s = r.capacity.rows
      .filter((row) => row.stage === stage)
      .reduce((a, row) => ({ rcu: a.rcu + row.rcu, wcu: a.wcu + row.wcu }), { rcu: 0, wcu: 0 });
    return { rcu: s.rcu / per, wcu: s.wcu / per };
  };
  const row = (what: string, r: PhaseResult) => {
    const pub = units(r, 'publisher');
    const dis = units(r, 'dispatcher');
    return [what, `${r.firstTryDelivered}/${r.events}`, f2(pub.rcu), f2(pub.wcu), f2(dis.rcu), f2(dis.wcu), f2(pub.wcu + dis.wcu)];
  };
  console.log(
    table(
      ['run', 'first-try', 'publisher RCU', 'publisher WCU', 'dispatcher RCU', 'dispatcher WCU', 'WCU in all'],
      [
        row('no options (the throughput run)', p.throughput),
        row(`rateLimitPerSecond ${OPTIONS_RATE_LIMIT} (never reached)`, rateLimited),
        row(`+ ${UNMATCHED_FILTERS} subscribers whose filter matches nothing`, unmatchedFilters),
      ],
      [false, true, true, true, true, true, true],
    ),
  );
  const base = units(p.throughput, 'dispatcher');
  const limited = units(rateLimited, 'dispatcher');
  const basePub = units(p.throughput, 'publisher');
  const filteredPub = units(unmatchedFilters, 'publisher');
  console.log(
    `rate budget: dispatcher ${f2(limited.wcu - base.wcu)} WCU per delivery more (one budget write per batch and endpoint, not per delivery); ` +
      `unmatched filters: publisher ${f2(filteredPub.rcu - basePub.rcu)} RCU and ${f2(filteredPub.wcu - basePub.wcu)} WCU per event more (no row, no message for them).`,
  );
}

const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');

function printFairness(r: FairnessResult): void {
  console.log(`\n== Fairness: ${HEALTHY_LABEL(r)} (${r.lanes}; batch 25, 4 batches) ==`);
  const row = (what: string, run: FairnessResult['baseline']) => [
    what,
    `${run.received}/${run.healthyDeliveries}`,
    f1(run.deliveredPerSecond),
    f1(run.latencyMs.p50),
    f1(run.latencyMs.p90),
    f1(run.latencyMs.p99),
    f1(run.latencyMs.max),
  ];
  console.log(
    table(
      ['run (healthy workspaces)', 'received', 'deliveries/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
      [row('alone (baseline)', r.baseline), row('with a black-hole workspace (10 % of deliveries)', r.withBlackHole)],
      [false, true, true, true, true, true, true],
    ),
  );
  console.log(
    `throughput kept: ${f1(r.throughputRatio * 100)} % (goal ≥ 80 %); p99 with the black hole ${f1(r.withBlackHole.latencyMs.p99)} ms (goal < 2000 ms): ${r.meetsGoal ? 'MEETS the goal' : 'MISSES the goal'}`,
  );
  console.log(fairnessNote(r));
}

const HEALTHY_LABEL = (r: FairnessResult) => `${r.healthyRatePerSecond} healthy deliveries/s over 3 workspaces for ${r.seconds} s`;

function printPipeline(p: PhaseFigures): void {
  const t = p.throughput;
  const ratio = t.deliveredPerSecond / p.ceiling.perSecond;
  const rawRow = (r: RawResult, what: string) => [
    `${what}${r === p.ceiling ? ' = ceiling' : ''}`,
    f1(r.perSecond),
    'requests/s',
    `${r.requests} POSTs in ${f2(r.seconds)} s, ${r.concurrency} in flight over ≤${r.connections} keep-alive connections`,
  ];
  const m = p.dynamoDbCallMix;
  console.log(`\n== Throughput (${t.events} events, 1 endpoint, ${PUBLISH_CONCURRENCY} concurrent publisher invocations) ==`);
  console.log(
    table(
      ['measure', 'value', 'unit', 'detail'],
      [
        [
          'pipeline: publish → dispatch → record',
          f1(t.deliveredPerSecond),
          'deliveries/s',
          `${t.firstTryDelivered} first-try delivered in ${f2(t.seconds)} s (first publish → last record)`,
        ],
        rawRow(p.raw, 'raw POST, 1 process'),
        rawRow(p.rawSenderConnections, "raw POST, 1 process, dispatcher's pool size"),
        ['ratio pipeline / ceiling', f1(ratio * 100), '%', ''],
        [
          'publish only (same run)',
          f1(t.publishedPerSecond),
          'events/s',
          `all ${t.events} publisher calls returned after ${f2(t.publishSeconds)} s`,
        ],
        [
          "DynamoDB Local alone, the pipeline's calls",
          f1(m.eventsPerSecond),
          'events/s',
          `${f2(m.callsPerEvent)} calls/event (${CALL_MIX}) = ${f1(m.callsPerSecond)} calls/s, ${m.concurrency} concurrent, ${m.events} events`,
        ],
        [
          'ratio pipeline / DynamoDB Local alone',
          f1((t.deliveredPerSecond / m.eventsPerSecond) * 100),
          '%',
          "how close the pipeline gets to the emulator's own limit for its calls",
        ],
      ],
      [false, true, false, false],
    ),
  );
  const checks = [
    `not first-try delivered: ${t.notFirstTry}`,
    `publish errors: ${t.publishErrors}`,
    `pipeline errors: ${t.pipelineErrors}`,
    `receiver duplicates: ${t.receiverDuplicates}`,
    `bad bodies: ${t.receiverBadBodies}`,
    `raw errors/non-2xx: ${p.raw.errors + p.rawSenderConnections.errors}/${p.raw.non2xx + p.rawSenderConnections.non2xx}`,
    ...(t.timedOut ? ['TIMED OUT before the queue drained'] : []),
  ];
  console.log(`checks: ${checks.join('; ')}`);
  const slowLane = t.usage.functions['slow-dispatcher']?.records ?? 0;
  if (slowLane > 0) {
    console.log(
      `  ${slowLane} records went through the slow lane (docs/behaviour.md#delivery-lanes): a POST to the receiver (which answers at once) took 3 s or more, so the machine is overloaded and the endpoint was marked slow; throughput and latency are the slow lane's, and the cost rows count its invocations.`,
    );
  }

  const l = p.latency;
  const pct = (x: { p50: number; p99: number }) => `${f1(x.p50)} / ${f1(x.p99)}`;
  const latencyRow = (run: string, r: PhaseResult) => [
    run,
    r.latencyMs.samples,
    f1(r.latencyMs.p50),
    f1(r.latencyMs.p90),
    f1(r.latencyMs.p99),
    f1(r.latencyMs.max),
    pct(r.publishCallMs),
    pct(r.queueToReceiptMs),
  ];
  console.log(`\n== Publish-to-receipt latency (publisher call start → the receiver has the whole request) ==`);
  console.log(
    table(
      ['run', 'events', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'publish call p50/p99', 'then → receipt p50/p99'],
      [
        ...[l, p.otherLatency].map((r) =>
          latencyRow(
            `paced at ${r.ratePerSecond} events/s, batches of ${r.batchSize} (${r.batchSize > 10 ? '1 s window' : 'no window'})`,
            r,
          ),
        ),
        latencyRow(`throughput run (saturated: includes backlog)`, t),
      ],
      [false, true, true, true, true, true, true, true],
    ),
  );
  console.log(
    '"then → receipt" = publisher returned → receipt: the queue wait, including the batching window (over 10 per batch, a batch leaves when it is full or the oldest has waited 1 s; at 10 or less at once: the stage setting dispatcherBatchSize), then the dispatcher\'s two reads, signing and the POST.',
  );
  if (l.notFirstTry > 0 || l.pipelineErrors > 0 || l.timedOut)
    console.log(
      `latency run checks: not first-try ${l.notFirstTry}, pipeline errors ${l.pipelineErrors}${l.timedOut ? ', TIMED OUT' : ''}`,
    );

  const per = Math.max(1, t.firstTryDelivered);
  console.log(
    `\n== DynamoDB capacity per first-try delivered event (DynamoDB Local's ConsumedCapacity, throughput run, ${t.firstTryDelivered} events) ==`,
  );
  console.log(
    table(
      ['stage', 'operation', 'calls/event', 'RCU/event', 'WCU/event', 'table / index split per event', 'mean call ms'],
      [
        ...t.capacity.rows.map((r) => [
          r.stage,
          r.operation,
          f2(r.calls / per),
          f2(r.rcu / per),
          f2(r.wcu / per),
          Object.entries(r.byTarget)
            .map(([target, units]) => `${target} ${f2(units / per)}`)
            .join(', '),
          f1(r.totalMs / Math.max(1, r.calls)),
        ]),
        ['total', '', f2(t.capacity.totals.calls / per), f2(t.capacity.totals.rcu / per), f2(t.capacity.totals.wcu / per), '', ''],
      ],
      [false, false, true, true, true, false, true],
    ),
  );
  const stageTotals = (stage: string) =>
    t.capacity.rows.filter((r) => r.stage === stage).reduce((a, r) => ({ rcu: a.rcu + r.rcu, wcu: a.wcu + r.wcu }), { rcu: 0, wcu: 0 });
  for (const stage of ['publisher', 'dispatcher']) {
    const s = stageTotals(stage);
    console.log(`  ${stage}: ${f2(s.rcu / per)} RCU + ${f2(s.wcu / per)} WCU per event`);
  }
  if (t.capacity.totals.missing > 0) console.log(`  ${t.capacity.totals.missing} calls returned no ConsumedCapacity`);
  if (p.pipelineErrorSamples.length > 0) console.log(`pipeline error samples: ${p.pipelineErrorSamples.join(' | ')}`);
}

/** What the cost model takes from a phase. */
const countsOf = (r: PhaseResult): PhaseCounts => ({
  deliveries: r.firstTryDelivered,
  rcu: r.capacity.totals.rcu,
  wcu: r.capacity.totals.wcu,
  usage: r.usage,
});

const PROVISIONED = { targetUtilizationPercent: TABLE_TARGET_UTILIZATION_PERCENT };
/** The cost targets, USD per million first-try deliveries at 1 KiB (docs/scaling.md#cost-per-million-deliveries). */
const COST_TARGETS = { onDemand: 7, provisioned: 4 } as const;
const usd = (n: number) => (Number.isFinite(n) ? `$${n < 0.01 && n > 0 ? n.toFixed(4) : n.toFixed(2)}` : 'n/a');
const units = (n: number) => (n === 0 ? '0' : n < 0.01 ? n.toExponential(2) : n < 10 ? n.toFixed(3) : n.toFixed(0));

function printCost(p: PhaseFigures, functions: Record<string, FunctionSettings>): CostModel {
  const t = p.throughput;
  const model = costModel(countsOf(t), functions, PROVISIONED);
  console.log(
    `\n== AWS cost per million first-try deliveries (throughput run: ${t.firstTryDelivered} deliveries, ${t.payloadBytes}-byte payloads, 1 endpoint; ${PRICES_AS_OF.region} list prices checked ${PRICES_AS_OF.date}, bench/prices.ts) ==`,
  );
  console.log(
    table(
      ['component', 'per delivery', 'unit', '$ per million', 'counted from'],
      [
        ...model.rows.map((r) => [r.component, units(r.perDelivery), r.unit, usd(r.perMillion), r.basis]),
        [
          'total, on-demand table',
          '',
          '',
          usd(model.onDemandTotal),
          `target ≤ $${COST_TARGETS.onDemand}: ${model.onDemandTotal <= COST_TARGETS.onDemand ? 'MEETS' : 'MISSES'}`,
        ],
        [
          `DynamoDB provisioned at ${model.provisioned.targetUtilizationPercent} % utilisation`,
          '',
          '',
          usd(model.provisioned.dynamoDb),
          'the same units at the WCU-hour and RCU-hour prices, divided by the utilisation auto scaling targets (lib/constructs/table.ts)',
        ],
        [
          'total, provisioned table',
          '',
          '',
          usd(model.provisioned.total),
          `target ≤ $${COST_TARGETS.provisioned}: ${model.provisioned.total <= COST_TARGETS.provisioned ? 'MEETS' : 'MISSES'}`,
        ],
      ],
      [false, true, false, true, false],
    ),
  );
  const asMeasured = model.rows.find((r) => r.inTotal === false);
  const estimate = model.rows.find((r) => r.component.startsWith('Lambda duration') && r.inTotal !== false);
  if (asMeasured && estimate) {
    console.log(
      `The totals take the Lambda duration estimate: DynamoDB Local on this machine answers in tens to hundreds of ms where DynamoDB takes a few. With the durations as measured here instead: ${usd(model.onDemandTotal - estimate.perMillion + asMeasured.perMillion)} on-demand, ${usd(model.provisioned.total - estimate.perMillion + asMeasured.perMillion)} provisioned (an upper bound).`,
    );
  }
  const slow = [50, 200, 2000].map((ms) => `${ms} ms +${usd(receiverLatencyCost(ms, countsOf(t), functions))}`);
  console.log(
    `Lambda duration is measured against DynamoDB Local and a receiver that answers at once. Receivers that take longer add dispatcher time (a batch waits for them concurrently, about once per invocation), per million: ${slow.join(', ')}. ` +
      `Not per delivery, so not above: the event source mapping's empty receives while the queues are idle (a few requests a second per queue), storage, and the free tiers.`,
  );
  console.log(`Prices: ${Object.values(PRICE_SOURCES).join(' ')}`);
  return model;
}

function printSweep(p: PhaseFigures, functions: Record<string, FunctionSettings>): void {
  const sweep = p.sweep;
  if (sweep.length === 0) return;
  const per = (r: PhaseResult, n: number) => n / Math.max(1, r.firstTryDelivered);
  console.log(
    `\n== DynamoDB units per first-try delivery by payload size (sweep: ${sweep.map((r) => r.events).join('/')} events, ${PUBLISH_CONCURRENCY} concurrent publishers) ==`,
  );
  const keys = [...new Set(sweep.flatMap((r) => r.capacity.rows.map((row) => `${row.stage}|${row.operation}`)))].sort();
  const cell = (r: PhaseResult, key: string) => {
    const row = r.capacity.rows.find((x) => `${x.stage}|${x.operation}` === key);
    return row ? `${f2(per(r, row.rcu))} / ${f2(per(r, row.wcu))}` : '';
  };
  console.log(
    table(
      ['function', 'operation (RCU / WCU per delivery)', ...sweep.map((r) => `${r.payloadBytes} B`)],
      [
        ...keys.map((key) => [...key.split('|'), ...sweep.map((r) => cell(r, key))]),
        ['total', '', ...sweep.map((r) => `${f2(per(r, r.capacity.totals.rcu))} / ${f2(per(r, r.capacity.totals.wcu))}`)],
        ['$ per million, on-demand table', '', ...sweep.map((r) => usd(costModel(countsOf(r), functions, PROVISIONED).onDemandTotal))],
        [
          '$ per million, provisioned table',
          '',
          ...sweep.map((r) => usd(costModel(countsOf(r), functions, PROVISIONED).provisioned.total)),
        ],
        [
          'checks: not first-try / duplicates / errors',
          '',
          ...sweep.map((r) => `${r.notFirstTry} / ${r.receiverDuplicates} / ${r.pipelineErrors + r.publishErrors}`),
        ],
      ],
      [false, false, ...sweep.map(() => true)],
    ),
  );
  const first = sweep[0]!;
  const last = sweep[sweep.length - 1]!;
  if (first === last) return;
  const grew = {
    rcu: per(last, last.capacity.totals.rcu) - per(first, first.capacity.totals.rcu),
    wcu: per(last, last.capacity.totals.wcu) - per(first, first.capacity.totals.wcu),
  };
  const own = payloadOwnUnits(last.payloadBytes);
  const within = grew.wcu + grew.rcu <= own.wcu + own.rcu;
  console.log(
    `From ${first.payloadBytes} to ${last.payloadBytes} bytes the units per delivery grew by ${f2(grew.wcu)} WCU + ${f2(grew.rcu)} RCU = ${f2(grew.wcu + grew.rcu)}; ` +
      `the ${last.payloadBytes}-byte payload's own units are one write, ceil(${last.payloadBytes} / 1024) = ${own.wcu} WCU, and one strongly consistent read, ceil(${last.payloadBytes} / 4096) = ${own.rcu} RCU: ${own.wcu + own.rcu} units. ` +
      `Growth ${within ? 'within' : 'OVER'} the payload's own units.`,
  );
}

type LambdaResults = Awaited<ReturnType<typeof measureLambdas>>;

function printLambdas(l: LambdaResults): void {
  if (args.sdk.length > 1) {
    printSdkComparison(l);
    return;
  }
  console.log(
    `\n== Lambda bundles (esbuild as NodejsFunction does it: cjs, minify, node24, source map; AWS SDK ${args.sdk[0]}${args.sdk[0] === 'per-function' ? ', as deployed' : ''}) ==`,
  );
  console.log(
    table(
      [
        'function',
        'min KiB',
        'gzip KiB',
        'cold init ms',
        'fastest ms',
        'require ms',
        'require CPU ms',
        'no-maps ms',
        'largest inputs (KiB in output)',
      ],
      l.functions.map((f) => [
        f.name,
        f1(f.bytes / 1024),
        f1(f.gzipBytes / 1024),
        f.error ? 'error' : f1(f.coldInitMs),
        f.error ? '' : f1(f.coldInitMinMs),
        f.error ? '' : f1(f.requireMs),
        f.error ? '' : f1(f.requireCpuMs),
        f.error ? '' : f1(f.requireNoMapsMs),
        f.error ?? f.largest,
      ]),
      [false, true, true, true, true, true, true, true, false],
    ),
  );
  console.log(
    `cold init = median wall time of a fresh \`node\` that require()s the bundle (NODE_OPTIONS=--enable-source-maps, as deployed) minus a bare \`node -e ''\` (${f1(l.baselineMs)} ms); ` +
      `fastest = the fastest run minus the fastest bare node (${f1(l.baselineMinMs)} ms); require ms and CPU ms = the same require() timed inside the child; no-maps ms = without --enable-source-maps. ${INIT_RUNS} runs each.`,
  );
}

/** More than one `--sdk` placement: each function every way, side by side; Δ against the first placement, median of the per-round pairs. */
function printSdkComparison(l: LambdaResults): void {
  const base = args.sdk[0]!;
  console.log(`\n== Lambda bundles by where the AWS SDK comes from (${args.sdk.join(', ')}; Δ against ${base}) ==`);
  const of = new Map(l.functions.map((f) => [`${f.name} ${f.sdk}`, f]));
  const pairedDelta = (a: readonly number[], b: readonly number[]) =>
    median(a.slice(0, Math.min(a.length, b.length)).map((x, i) => b[i]! - x));
  const rows: (string | number)[][] = [];
  for (const name of [...new Set(l.functions.map((f) => f.name))]) {
    const first = of.get(`${name} ${base}`)!;
    for (const sdk of args.sdk) {
      const f = of.get(`${name} ${sdk}`)!;
      if (f.error) {
        rows.push([name, sdk, f.error, '', '', '', '', '', '']);
        continue;
      }
      const compared = sdk !== base && !first.error;
      rows.push([
        name,
        sdk,
        f1(f.bytes / 1024),
        f1(f.mapBytes / 1024),
        `${f1(f.coldInitMinMs)} / ${f1(f.coldInitMs)}`,
        compared ? f1(pairedDelta(first.samples.wallMs, f.samples.wallMs)) : '',
        `${f1(Math.min(...f.samples.cpuMs))} / ${f1(f.requireCpuMs)}`,
        compared ? f1(pairedDelta(first.samples.cpuMs, f.samples.cpuMs)) : '',
        f.largest,
      ]);
    }
  }
  console.log(
    table(
      ['function', 'SDK', 'KiB', 'map KiB', 'init min / med ms', 'Δ init', 'require CPU min / med ms', 'Δ CPU', 'largest inputs (KiB)'],
      rows,
      [false, false, true, true, true, true, true, true, false],
    ),
  );
  console.log(
    `init = wall time of a fresh \`node\` that require()s the bundle (and the SDK modules it requires from node_modules, when they are external), minus a bare \`node -e ''\` ` +
      `(min ${f1(l.baselineMinMs)}, median ${f1(l.baselineMs)} ms); require CPU = user + system time of that require() inside the child. NODE_OPTIONS=--enable-source-maps, as deployed. ` +
      `Δ = this way − ${base}, the median of the ${INIT_RUNS} rounds' pairs (negative: faster than ${base}).`,
  );
}

function gitDescribe(): string {
  const rev = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: PROJECT_ROOT, encoding: 'utf8' });
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: PROJECT_ROOT, encoding: 'utf8' });
  return `${rev.stdout.trim() || 'unknown'}${dirty.stdout.trim() ? ' (+ uncommitted changes)' : ''}`;
}

async function main(): Promise<number> {
  const startedAt = new Date();
  const env = {
    node: process.version,
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? 'unknown',
    loadAverageBefore: loadavg().map((n) => round(n, 2)),
    commit: gitDescribe(),
  };
  let lambdas: LambdaResults | undefined;
  let pipeline: PipelineFigures | undefined;
  let functionSettings: Record<string, FunctionSettings> | undefined;
  let costs: { throughput: CostModel; sweep: { payloadBytes: number; model: CostModel }[] } | undefined;
  try {
    if (!args.skipLambdas) {
      const outDir = mkdtempSync(join(tmpdir(), 'webhooks-bench-bundles-'));
      cleanups.push(async () => rmSync(outDir, { recursive: true, force: true }));
      log('bundling every lambdas/functions/*.ts…');
      lambdas = await measureLambdas({
        projectRoot: PROJECT_ROOT,
        outDir,
        runs: INIT_RUNS,
        only: args.only,
        sdk: args.sdk,
        noMaps: args.sdk.length === 1,
        log,
      });
    }
    if (!args.skipPipeline) pipeline = await runPipeline();
  } finally {
    await cleanUp();
  }

  console.log(`\nWebhook delivery benchmark, ${startedAt.toISOString()}`);
  console.log(
    `Node ${env.node}, ${env.cpus} CPUs (${env.cpuModel}), load average before ${env.loadAverageBefore.join(' / ')}, after ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' / ')}; commit ${env.commit}`,
  );
  if (pipeline) {
    console.log(
      `Setup: local stack in this process (DynamoDB Local in-memory, in-process queue with SQS semantics: batch ${args.dispatcherBatchSize}, window ${dispatcherConsumer(args.dispatcherBatchSize, 4).maxBatchingWindowSeconds} s, 4 batches in flight; the real publisher and dispatcher handlers); ` +
        `receiver: a minimal node:http server in its own process on 127.0.0.1 that answers 200 at once (no signature verification). Payloads: ${args.payloadBytes} bytes of JSON.`,
    );
    if (pipeline.phases) {
      printPipeline(pipeline.phases);
      try {
        functionSettings = pipelineFunctionSettings(args.dispatcherBatchSize);
        costs = {
          throughput: printCost(pipeline.phases, functionSettings),
          sweep: pipeline.phases.sweep.map((r) => ({
            payloadBytes: r.payloadBytes,
            model: costModel(countsOf(r), functionSettings!, PROVISIONED),
          })),
        };
        printSweep(pipeline.phases, functionSettings);
      } catch (e) {
        console.log(`\ncost model: could not read the functions' deployed settings from the CDK constructs: ${(e as Error).message}`);
      }
      printOptions(pipeline.phases);
    }
    if (pipeline.fairness) printFairness(pipeline.fairness);
  }
  if (lambdas) printLambdas(lambdas);

  mkdirSync(join(PROJECT_ROOT, '.local'), { recursive: true });
  writeFileSync(
    RESULTS_FILE,
    `${JSON.stringify(
      {
        startedAt: startedAt.toISOString(),
        environment: { ...env, loadAverageAfter: loadavg().map((n) => round(n, 2)) },
        options: {
          events: EVENTS,
          warmup: WARMUP,
          publishConcurrency: PUBLISH_CONCURRENCY,
          latencyEvents: LATENCY_EVENTS,
          initRuns: INIT_RUNS,
          sdk: args.sdk,
          payloadBytes: args.payloadBytes,
        },
        fairness: pipeline?.fairness ?? null,
        pipeline: pipeline?.phases
          ? {
              deliveriesPerSecond: pipeline.phases.throughput.deliveredPerSecond,
              rawCeilingPerSecond: pipeline.phases.ceiling.perSecond,
              ratio: pipeline.phases.throughput.deliveredPerSecond / pipeline.phases.ceiling.perSecond,
              throughput: pipeline.phases.throughput,
              latency: pipeline.phases.latency,
              otherLatency: pipeline.phases.otherLatency,
              warmup: pipeline.phases.warmup,
              raw: pipeline.phases.raw,
              rawSenderConnections: pipeline.phases.rawSenderConnections,
              dynamoDbCallMix: pipeline.phases.dynamoDbCallMix,
              sweep: pipeline.phases.sweep,
              options: pipeline.phases.options,
              pipelineErrorSamples: pipeline.phases.pipelineErrorSamples,
            }
          : null,
        lambdas: lambdas ?? null,
        cost: costs ? { prices: PRICES_AS_OF, functionSettings, ...costs } : null,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`\nwrote ${RESULTS_FILE}`);
  const t = pipeline?.phases?.throughput;
  const options = pipeline?.phases ? Object.values(pipeline.phases.options) : [];
  const failed = [...(t ? [t] : []), ...(pipeline?.phases?.sweep ?? []), ...options].some(
    (r) => r.timedOut || r.notFirstTry > 0 || r.publishErrors > 0 || r.receiverDuplicates > 0,
  );
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  async (e: unknown) => {
    await cleanUp();
    console.error('[bench] failed:', e);
    process.exit(1);
  },
);
