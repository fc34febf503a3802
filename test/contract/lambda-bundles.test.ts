/**
 * Every function's bundle, built with the options of lib/constructs/service-function.ts (the AWS
 * SDK bundled but for what the function can never load), carries neither zod nor ajv (the MCP
 * SDK's own copies aside) nor any zod schema module of the contract, and stays within its budget:
 * its size as measured (docs/scaling.md#the-aws-sdk-in-the-bundles) plus 10 %.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployedExternalModules, serviceFunctionBuildOptions } from '../../bench/lambdas';
import { sdkExternalModules } from '../../lib/constructs/service-function';

const ROOT = join(import.meta.dirname, '..', '..');
const FUNCTIONS = join(ROOT, 'lambdas', 'functions');
const KIB = 1024;

/**
 * Each function's minified bundle as measured, KiB (docs/scaling.md#the-aws-sdk-in-the-bundles); its
 * budget is 10 % more. A new function gets its measured size here.
 */
const MEASURED_KIB: Readonly<Record<string, number>> = {
  'ack-notification': 308,
  authorizer: 268,
  'cancel-job': 308,
  'create-api-token': 309,
  'create-console-nonce': 343,
  'create-console-session': 349,
  'create-portal-session': 316,
  'create-webhook': 424,
  'dead-letter': 340,
  'delete-webhook': 368,
  dispatcher: 441,
  'exchange-portal-session': 314,
  'get-branding': 309,
  'get-job': 303,
  'get-webhook': 317,
  'get-webhook-delivery': 306,
  'get-webhook-health': 305,
  'get-workspace-overview': 304,
  'list-api-tokens': 302,
  'list-audit-events': 303,
  'list-console-sessions': 321,
  'list-deliveries': 312,
  'list-event-types': 301,
  'list-jobs': 308,
  'list-members': 303,
  'list-notifications': 303,
  'list-portal-sessions': 312,
  'list-webhook-deliveries': 312,
  'list-webhook-delivery-attempts': 308,
  'list-webhooks': 318,
  'list-workspaces': 320,
  mcp: 787,
  'outbox-relay': 310,
  'platform-create-api-token': 316,
  'platform-create-portal-session': 316,
  'platform-create-workspace': 313,
  'platform-delete-workspace': 368,
  'platform-get-job': 308,
  'platform-get-workspace': 308,
  'platform-list-workspaces': 310,
  'platform-update-workspace': 313,
  'pending-repair': 317,
  publisher: 326,
  'recover-webhook-deliveries': 361,
  'recovery-worker': 337,
  'replay-webhook-delivery': 359,
  retention: 275,
  'revoke-api-token': 308,
  'revoke-console-session': 321,
  'revoke-portal-session': 315,
  'rotate-webhook-secret': 391,
  'secret-expiry': 273,
  'send-webhook-test-event': 354,
  'serve-console': 13,
  'serve-docs': 8,
  'set-branding': 315,
  'slow-dispatcher': 441,
  'test-webhook-filter': 310,
  'update-webhook': 428,
};
/** The budget of a function's bundle, bytes. */
const budgetOf = (name: string) => Math.round(MEASURED_KIB[name]! * KIB * 1.1);

/** Contract modules that build zod schemas: build-time only (OpenAPI, tests, generation). */
const ZOD_CONTRACT =
  /lambdas\/contract\/(schemas|operations|problem|event-schemas|page-schemas|health-schemas|job-schemas|filter-schemas|delivery-log-query|idempotency|platform-schemas|erasure-schemas)\.ts$/;

const names = readdirSync(FUNCTIONS)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.slice(0, -3))
  .sort();

let outDir: string;
let metafile: Metafile;

beforeAll(async () => {
  outDir = mkdtempSync(join(tmpdir(), 'bundles-'));
  // Each function leaves out what it can never load (lib/constructs/service-function.ts): one build
  // per set of such modules.
  const deployed = deployedExternalModules(ROOT);
  const groups = new Map<string, { externals: readonly string[]; names: string[] }>();
  for (const name of names) {
    const externals = deployed.get(name) ?? sdkExternalModules({});
    const group = groups.get(externals.join()) ?? { externals, names: [] };
    group.names.push(name);
    groups.set(externals.join(), group);
  }
  metafile = { inputs: {}, outputs: {} };
  for (const { externals, names: group } of groups.values()) {
    const {
      outfile: _outfile,
      entryPoints: _entries,
      ...options
    } = serviceFunctionBuildOptions(join(FUNCTIONS, 'x.ts'), join(outDir, 'x.js'), ROOT, externals);
    const result = await build({
      ...options,
      entryPoints: Object.fromEntries(group.map((n) => [n, join(FUNCTIONS, `${n}.ts`)])),
      outdir: outDir,
      metafile: true,
      logLevel: 'error',
    });
    Object.assign(metafile.inputs, result.metafile.inputs);
    Object.assign(metafile.outputs, result.metafile.outputs);
  }
}, 120_000);

afterAll(() => rmSync(outDir, { recursive: true, force: true }));

function bundleOf(name: string) {
  const entry = Object.entries(metafile.outputs).find(([path]) => path.endsWith(`/${name}.js`));
  if (!entry) throw new Error(`no bundle for ${name}`);
  return entry[1];
}

/** The npm packages (and their sizes in the output) of a bundle whose input paths match `pattern`. */
function inputsMatching(name: string, pattern: RegExp): string[] {
  return Object.entries(bundleOf(name).inputs)
    .filter(([path, input]) => pattern.test(path) && input.bytesInOutput > 0)
    .map(([path]) => path);
}

describe('function bundles', () => {
  it.each(names)('%s carries no zod schema of the contract, and no zod or ajv of its own', (name) => {
    expect(inputsMatching(name, ZOD_CONTRACT)).toEqual([]);
    if (name !== 'mcp') expect(inputsMatching(name, /node_modules\/(zod|ajv)\//)).toEqual([]);
  });

  it('the MCP function has zod and ajv only through the SDK', () => {
    // The SDK's types and its JSON Schema validator bring them; none of our code imports either.
    const ours = Object.entries(bundleOf('mcp').inputs)
      .filter(([path, input]) => input.bytesInOutput > 0 && /^lambdas\//.test(path))
      .flatMap(([path]) => metafile.inputs[path]?.imports.map((i) => i.path) ?? [])
      .filter((p) => /node_modules\/(zod|ajv)\//.test(p));
    expect(ours).toEqual([]);
  });

  it.each(names)('%s is within its budget', (name) => {
    expect(MEASURED_KIB[name], `${name} has no measured size`).toBeDefined();
    expect(bundleOf(name).bytes).toBeLessThanOrEqual(budgetOf(name));
  });
});
