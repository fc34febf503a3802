/**
 * Bundle size and cold init of every Lambda entry (`lambdas/functions/*.ts`),
 * bundled with the esbuild options NodejsFunction derives from
 * lib/constructs/service-function.ts: CJS, minify, platform node, target
 * node24, source map without sources content, main fields module,main, and the AWS SDK bundled
 * but for what the function can never load (`ServiceFunction.externalModules`, read from the
 * constructs of the service's stack). These are spelled out again here;
 * test/lib/constructs/service-function.test.ts checks that the bundle is byte-for-byte the one CDK
 * deploys and that NODE_OPTIONS is the deployed one.
 *
 * For comparison a bundle can also be built with other placements of the AWS SDK
 * (docs/scaling.md#the-aws-sdk-in-the-bundles). With the SDK external the child loads the SDK
 * modules the bundle requires from the project's node_modules, as the runtime would from its own copy.
 *
 * Cold init = wall time of a fresh `node` that `require()`s the bundle minus
 * that of a bare `node -e ''` (medians, and minima). The child runs in the bundle's own
 * temp folder (outside the project, whose package.json says "type": "module")
 * with NODE_PATH at the project's node_modules, so an external `@aws-sdk/*` resolves as
 * the runtime's copy would. The in-child `require()` wall and CPU time are reported too:
 * the CPU time moves least with the machine's load.
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';
import { ENV, SERVICE_NAME } from '#lambdas/contract/deployment';
import { METRICS_NAMESPACE } from '#lambdas/contract/metrics';
import { LAZY_SDK_CLIENTS } from '#lambdas/contract/sdk-clients';
import { createWebhooksApp } from '../lib/app';
import { sdkExternalModules, ServiceFunction, UNUSED_CREDENTIAL_PROVIDERS } from '../lib/constructs/service-function';
import { median, nowMs } from './stats';

/**
 * Where a bundle's AWS SDK v3 comes from: `per-function`, bundled but for the clients the function
 * can never load and the credential providers no deployed function loads (what ServiceFunction
 * deploys); for comparison `external`, the copy the Lambda runtime ships; `bundled` whole into it;
 * or `split`: bundled but for every module loaded only on first use, which stay external.
 */
export type SdkPlacement = 'per-function' | 'external' | 'bundled' | 'split';

/** Every placement, in the order `--sdk` lists them. */
export const SDK_PLACEMENTS: readonly SdkPlacement[] = ['per-function', 'external', 'bundled', 'split'];

/**
 * The SDK modules loaded only by a dynamic `import()`: the SQS, EventBridge and KMS clients
 * (lambdas/composition/runtime.ts makes them on first use) and the credential providers the
 * default chain imports only when the environment holds no credentials (never on Lambda).
 */
const LAZY_SDK_MODULES = [...Object.keys(LAZY_SDK_CLIENTS), ...UNUSED_CREDENTIAL_PROVIDERS];

/**
 * Every deployed function's `externalModules`, by entry name, from the constructs of the service's
 * stack as `cdk synth` builds it (bundling skipped): the one place that decides them.
 */
export function deployedExternalModules(projectRoot: string): ReadonlyMap<string, readonly string[]> {
  const cdkJson = JSON.parse(readFileSync(join(projectRoot, 'cdk.json'), 'utf8')) as { context?: Record<string, unknown> };
  const { app } = createWebhooksApp({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } }, projectRoot);
  const byName = new Map<string, readonly string[]>();
  for (const fn of app.node.findAll()) {
    if (!(fn instanceof ServiceFunction)) continue;
    const name = basename(fn.entry, '.ts');
    const seen = byName.get(name);
    if (seen && seen.join() !== fn.externalModules.join())
      throw new Error(`${name} is deployed twice with different external modules: ${seen.join()} and ${fn.externalModules.join()}`);
    byName.set(name, fn.externalModules);
  }
  return byName;
}

/** The external modules of each placement, for the function `name`. */
function externalsOf(sdk: SdkPlacement, name: string, deployed: ReadonlyMap<string, readonly string[]>): readonly string[] {
  switch (sdk) {
    case 'external':
      return ['@aws-sdk/*'];
    case 'bundled':
      return [];
    case 'split':
      return LAZY_SDK_MODULES;
    case 'per-function':
      // A function the stack does not deploy (none today) gets what a function without resources would.
      return deployed.get(name) ?? sdkExternalModules({});
  }
}

/** Every sample of one figure, in the order of the rounds. */
interface Samples {
  /** Spawn-to-exit of the child, ms. */
  readonly wallMs: number[];
  /** `require()` wall time inside the child, ms. */
  readonly requireMs: number[];
  /** `require()` CPU time (user + system) inside the child, ms. */
  readonly cpuMs: number[];
}

/** Figures of one function. */
interface LambdaFigures {
  readonly name: string;
  /** Where its AWS SDK came from. */
  readonly sdk: SdkPlacement;
  readonly bytes: number;
  readonly gzipBytes: number;
  readonly mapBytes: number;
  /** Median spawn-to-exit of `require()` minus bare node, ms (NODE_OPTIONS=--enable-source-maps, as deployed). */
  readonly coldInitMs: number;
  /** Fastest spawn-to-exit minus the fastest bare node, ms. */
  readonly coldInitMinMs: number;
  /** Median `require()` time measured inside the child, ms (as deployed). */
  readonly requireMs: number;
  /** Median `require()` CPU time (user + system) inside the child, ms (as deployed). */
  readonly requireCpuMs: number;
  /** Median in-child `require()` time without --enable-source-maps, ms; NaN when not measured. */
  readonly requireNoMapsMs: number;
  /** The samples of the deployed flags, one per round (rounds pair the placements of a function). */
  readonly samples: Samples;
  /** The largest contributors to the bundle (package or project folder, KiB in the output), from esbuild's metafile. */
  readonly largest: string;
  readonly error: string | null;
}

/** Output bytes per npm package (or project folder) of a bundle, largest first. */
function contributors(metafile: Metafile, top: number): string {
  const out = Object.values(metafile.outputs).find((o) => o.entryPoint);
  if (!out) return '';
  const by = new Map<string, number>();
  for (const [path, input] of Object.entries(out.inputs)) {
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? path.split('/').slice(0, 2).join('/');
    by.set(pkg, (by.get(pkg) ?? 0) + input.bytesInOutput);
  }
  return [...by]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, v]) => `${k} ${Math.round(v / 1024)}`)
    .join(', ');
}

/**
 * The esbuild options of a ServiceFunction bundle (NodejsFunction's flags, as the JS API spells them).
 * @param external the function's `externalModules` (default: those of a function given no resource)
 */
export function serviceFunctionBuildOptions(
  entry: string,
  outfile: string,
  projectRoot: string,
  external: readonly string[] = sdkExternalModules({}),
) {
  return {
    entryPoints: [entry],
    absWorkingDir: projectRoot,
    bundle: true,
    platform: 'node' as const,
    format: 'cjs' as const,
    target: 'node24',
    outfile,
    minify: true,
    sourcemap: true,
    sourcesContent: false,
    external: [...external],
    mainFields: ['module', 'main'],
    logLevel: 'warning' as const,
  };
}

/** Runs `node -e script` in `cwd`; wall ms and stdout. */
function runNode(
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ ms: number; stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const started = nowMs();
    const child = spawn(process.execPath, ['-e', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ ms: nowMs() - started, stdout, stderr, code }));
  });
}

/**
 * `NODE_OPTIONS` of every deployed function (lib/constructs/service-function.ts sets it; its test
 * checks the two agree), so the cold loads pay what the deployed flag costs.
 */
export const DEPLOYED_NODE_OPTIONS = '--enable-source-maps';

/** Environment of a deployed function, minus AWS credentials (none are needed to load a module). */
function lambdaEnv(projectRoot: string, sourceMaps: boolean): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    NODE_PATH: join(projectRoot, 'node_modules'),
    ...(sourceMaps ? { NODE_OPTIONS: DEPLOYED_NODE_OPTIONS } : {}),
    AWS_REGION: 'eu-west-1',
    AWS_LAMBDA_FUNCTION_NAME: 'bench',
    [ENV.TABLE_NAME]: 'bench-table',
    [ENV.RATE_LIMIT_TABLE_NAME]: 'bench-table',
    [ENV.DELIVERY_QUEUE_URL]: 'https://sqs.eu-west-1.amazonaws.com/000000000000/bench-deliveries',
    [ENV.EVENT_BUS_NAME]: 'bench-domain-events',
    [ENV.POWERTOOLS_SERVICE_NAME]: SERVICE_NAME,
    [ENV.POWERTOOLS_METRICS_NAMESPACE]: METRICS_NAMESPACE,
    [ENV.POWERTOOLS_LOG_LEVEL]: 'INFO',
  };
}

/** Prints the `require()` of the bundle: in-child wall ms and CPU ms (user + system). */
const REQUIRE_SCRIPT =
  "const c=process.cpuUsage(),t=performance.now();require('./index.js');const w=performance.now()-t,u=process.cpuUsage(c);" +
  "process.stdout.write(w+' '+(u.user+u.system)/1000);";

/** One bundle built for timing. */
interface Built {
  readonly name: string;
  readonly sdk: SdkPlacement;
  readonly dir: string;
  readonly bytes: number;
  readonly gzipBytes: number;
  readonly mapBytes: number;
  readonly largest: string;
  readonly error: string | null;
}

/** Bundles `entry` into `outDir/index.js` with the given SDK placement. */
async function buildOne(
  name: string,
  entry: string,
  outDir: string,
  projectRoot: string,
  sdk: SdkPlacement,
  external: readonly string[],
): Promise<Built> {
  const outfile = join(outDir, 'index.js');
  try {
    // metafile only adds the analysis; the bundle is byte-for-byte the same.
    const result = await build({ ...serviceFunctionBuildOptions(entry, outfile, projectRoot, external), metafile: true });
    const code = readFileSync(outfile);
    return {
      name,
      sdk,
      dir: outDir,
      bytes: code.length,
      gzipBytes: gzipSync(code, { level: 9 }).length,
      mapBytes: statSync(`${outfile}.map`).size,
      largest: contributors(result.metafile, 3),
      error: null,
    };
  } catch (e) {
    return {
      name,
      sdk,
      dir: outDir,
      bytes: 0,
      gzipBytes: 0,
      mapBytes: 0,
      largest: '',
      error: `bundle failed: ${(e as Error).message.split('\n')[0]}`,
    };
  }
}

/**
 * Bundles and times every entry, once per SDK placement in `sdk` (default: the deployed one).
 * `runs` rounds; each round times every bundle once, the placements of a function back to back
 * in alternating order, so drift in the machine's load falls on both alike.
 */
export async function measureLambdas(options: {
  projectRoot: string;
  outDir: string;
  runs: number;
  only?: readonly string[];
  sdk?: readonly SdkPlacement[];
  /** Also time every bundle without --enable-source-maps. @default true */
  noMaps?: boolean;
  log: (line: string) => void;
}): Promise<{ baselineMs: number; baselineMinMs: number; functions: LambdaFigures[] }> {
  const dir = join(options.projectRoot, 'lambdas', 'functions');
  const placements = options.sdk ?? ['per-function'];
  const deployed = placements.includes('per-function')
    ? deployedExternalModules(options.projectRoot)
    : new Map<string, readonly string[]>();
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.slice(0, -3))
    .filter((n) => !options.only || options.only.includes(n))
    .sort();

  const built: Built[] = [];
  for (const name of names) {
    for (const sdk of placements) {
      const external = externalsOf(sdk, name, deployed);
      built.push(await buildOne(name, join(dir, `${name}.ts`), join(options.outDir, sdk, name), options.projectRoot, sdk, external));
    }
  }
  options.log(`bundled ${names.length} functions (SDK ${placements.join(' and ')}); timing ${options.runs} cold loads each…`);

  const key = (b: Built) => `${b.name} ${b.sdk}`;
  const baseline: number[] = [];
  const samples = new Map<string, Samples>(built.map((b) => [key(b), { wallMs: [], requireMs: [], cpuMs: [] }]));
  const noMaps = new Map<string, number[]>(built.map((b) => [key(b), []]));
  const errors = new Map<string, string>();
  const envMaps = lambdaEnv(options.projectRoot, true);
  const envPlain = lambdaEnv(options.projectRoot, false);
  // Interleaved rounds, so drift in machine load spreads over every function alike.
  for (let round = 0; round < options.runs; round++) {
    baseline.push((await runNode('', options.outDir, envMaps)).ms);
    for (const name of names) {
      const ofName = built.filter((b) => b.name === name);
      for (const b of round % 2 === 0 ? ofName : ofName.reverse()) {
        if (b.error || errors.has(key(b))) continue;
        const run = await runNode(REQUIRE_SCRIPT, b.dir, envMaps);
        if (run.code !== 0) {
          errors.set(key(b), `require failed: ${run.stderr.trim().split('\n').slice(0, 6).join(' | ').slice(0, 300)}`);
          continue;
        }
        const [requireMs, cpuMs] = run.stdout.split(' ').map(Number);
        const s = samples.get(key(b))!;
        s.wallMs.push(run.ms);
        s.requireMs.push(requireMs!);
        s.cpuMs.push(cpuMs!);
        if (options.noMaps === false) continue;
        const plain = await runNode(REQUIRE_SCRIPT, b.dir, envPlain);
        if (plain.code === 0) noMaps.get(key(b))!.push(Number(plain.stdout.split(' ')[0]));
      }
    }
  }
  const baselineMs = median(baseline);
  const baselineMinMs = Math.min(...baseline);
  return {
    baselineMs,
    baselineMinMs,
    functions: built.map((b) => {
      const s = samples.get(key(b))!;
      return {
        name: b.name,
        sdk: b.sdk,
        bytes: b.bytes,
        gzipBytes: b.gzipBytes,
        mapBytes: b.mapBytes,
        coldInitMs: median(s.wallMs) - baselineMs,
        coldInitMinMs: (s.wallMs.length ? Math.min(...s.wallMs) : Number.NaN) - baselineMinMs,
        requireMs: median(s.requireMs),
        requireCpuMs: median(s.cpuMs),
        requireNoMapsMs: median(noMaps.get(key(b))!),
        samples: s,
        largest: b.largest,
        error: b.error ?? errors.get(key(b)) ?? null,
      };
    }),
  };
}
