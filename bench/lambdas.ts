/**
 * Bundle size and cold init of every Lambda entry (`lambdas/functions/*.ts`),
 * bundled with the esbuild options NodejsFunction derives from
 * lib/constructs/service-function.ts: CJS, minify, platform node, target
 * node24, source map without sources content, main fields module,main, and
 * `@aws-sdk/*` external (the Lambda runtime provides it). These are spelled out again here;
 * test/lib/constructs/service-function.test.ts checks that the bundle is byte-for-byte the one CDK
 * deploys and that NODE_OPTIONS is the deployed one.
 *
 * Cold init = wall time of a fresh `node` that `require()`s the bundle minus
 * that of a bare `node -e ''` (medians). The child runs in the bundle's own
 * temp folder (outside the project, whose package.json says "type": "module")
 * with NODE_PATH at the project's node_modules, so `@aws-sdk/*` resolves as
 * the runtime's copy would. The in-child `require()` time is reported too.
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';
import { ENV, SERVICE_NAME } from '#lambdas/contract/deployment';
import { METRICS_NAMESPACE } from '#lambdas/contract/metrics';
import { median, nowMs } from './stats';

/** Figures of one function. */
export interface LambdaFigures {
  readonly name: string;
  readonly bytes: number;
  readonly gzipBytes: number;
  readonly mapBytes: number;
  /** Median spawn-to-exit of `require()` minus bare node, ms (NODE_OPTIONS=--enable-source-maps, as deployed). */
  readonly coldInitMs: number;
  /** Median `require()` time measured inside the child, ms (as deployed). */
  readonly requireMs: number;
  /** Median in-child `require()` time without --enable-source-maps, ms. */
  readonly requireNoMapsMs: number;
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

/** The esbuild options of a ServiceFunction bundle (NodejsFunction's flags, as the JS API spells them). */
export function serviceFunctionBuildOptions(entry: string, outfile: string, projectRoot: string) {
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
    external: ['@aws-sdk/*'],
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

const REQUIRE_SCRIPT = "const t=performance.now();require('./index.js');process.stdout.write(String(performance.now()-t));";

/** Bundles and times every entry. `runs` children per function and variant. */
export async function measureLambdas(options: {
  projectRoot: string;
  outDir: string;
  runs: number;
  only?: readonly string[];
  log: (line: string) => void;
}): Promise<{ baselineMs: number; functions: LambdaFigures[] }> {
  const dir = join(options.projectRoot, 'lambdas', 'functions');
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.slice(0, -3))
    .filter((n) => !options.only || options.only.includes(n))
    .sort();

  const built: { name: string; dir: string; bytes: number; gzipBytes: number; mapBytes: number; largest: string; error: string | null }[] =
    [];
  for (const name of names) {
    const outDirOf = join(options.outDir, name);
    const outfile = join(outDirOf, 'index.js');
    try {
      // metafile only adds the analysis; the bundle is byte-for-byte the same.
      const result = await build({ ...serviceFunctionBuildOptions(join(dir, `${name}.ts`), outfile, options.projectRoot), metafile: true });
      const code = readFileSync(outfile);
      built.push({
        name,
        dir: outDirOf,
        bytes: code.length,
        gzipBytes: gzipSync(code, { level: 9 }).length,
        mapBytes: statSync(`${outfile}.map`).size,
        largest: contributors(result.metafile, 3),
        error: null,
      });
    } catch (e) {
      built.push({
        name,
        dir: outDirOf,
        bytes: 0,
        gzipBytes: 0,
        mapBytes: 0,
        largest: '',
        error: `bundle failed: ${(e as Error).message.split('\n')[0]}`,
      });
    }
  }
  options.log(`bundled ${built.length} functions; timing ${options.runs} cold loads each…`);

  const baseline: number[] = [];
  const wall = new Map<string, number[]>();
  const inChild = new Map<string, number[]>();
  const inChildNoMaps = new Map<string, number[]>();
  const errors = new Map<string, string>();
  const envMaps = lambdaEnv(options.projectRoot, true);
  const envPlain = lambdaEnv(options.projectRoot, false);
  // Interleaved rounds, so drift in machine load spreads over every function alike.
  for (let round = 0; round < options.runs; round++) {
    baseline.push((await runNode('', options.outDir, envMaps)).ms);
    for (const b of built) {
      if (b.error || errors.has(b.name)) continue;
      const run = await runNode(REQUIRE_SCRIPT, b.dir, envMaps);
      if (run.code !== 0) {
        errors.set(b.name, `require failed: ${run.stderr.trim().split('\n').slice(0, 6).join(' | ').slice(0, 300)}`);
        continue;
      }
      (wall.get(b.name) ?? wall.set(b.name, []).get(b.name)!).push(run.ms);
      (inChild.get(b.name) ?? inChild.set(b.name, []).get(b.name)!).push(Number(run.stdout));
      const plain = await runNode(REQUIRE_SCRIPT, b.dir, envPlain);
      if (plain.code === 0) (inChildNoMaps.get(b.name) ?? inChildNoMaps.set(b.name, []).get(b.name)!).push(Number(plain.stdout));
    }
  }
  const baselineMs = median(baseline);
  return {
    baselineMs,
    functions: built.map((b) => ({
      name: b.name,
      bytes: b.bytes,
      gzipBytes: b.gzipBytes,
      mapBytes: b.mapBytes,
      coldInitMs: median(wall.get(b.name) ?? []) - baselineMs,
      requireMs: median(inChild.get(b.name) ?? []),
      requireNoMapsMs: median(inChildNoMaps.get(b.name) ?? []),
      largest: b.largest,
      error: b.error ?? errors.get(b.name) ?? null,
    })),
  };
}
