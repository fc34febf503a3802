/**
 * Real esbuild bundles of two pipeline functions: the publisher (its event
 * catalogue is `config/event-types.json`, imported as JSON and baked in at
 * synth) and the dispatcher (the largest: the HTTP client). Each bundle carries the AWS SDK it
 * runs with, and may require at run time only Node.js built-ins and the modules it leaves out
 * (docs/scaling.md#the-aws-sdk-in-the-bundles).
 */
import { builtinModules } from 'node:module';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, AssetStaging, Stack } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionEntry, PROJECT_ROOT, ServiceFunction } from '../../lib/constructs/service-function';
import { cdkJsonContext } from './synth';

const ENTRIES = ['publisher', 'dispatcher'] as const;

let outdir: string;
const code = new Map<string, string>();
const externals = new Map<string, readonly string[]>();

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'webhooks-pipeline-bundle-'));
  const app = new App({ outdir, context: cdkJsonContext() });
  const stack = new Stack(app, 'PipelineBundles');
  for (const entry of ENTRIES) {
    const fn = new ServiceFunction(stack, entry, { entry: functionEntry(entry) });
    externals.set(entry, fn.externalModules);
    const staging = fn.node.findAll().find((c): c is AssetStaging => c instanceof AssetStaging);
    code.set(entry, readFileSync(join(staging!.absoluteStagedPath, 'index.js'), 'utf8'));
  }
}, 120_000);

afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

/**
 * The modules a minified CommonJS bundle requires. ajv keeps `require("ajv/dist/runtime/…")`
 * as text for its standalone code generator (`x.code='require(…)'`); those are not calls.
 */
function requiredModules(source: string): Set<string> {
  return new Set([...source.matchAll(/(?<!['"`])require\("([^"]+)"\)/g)].map((m) => m[1]!));
}

describe('the pipeline bundles', () => {
  it('bake in the configured event types of config/event-types.json', () => {
    const config = JSON.parse(readFileSync(join(PROJECT_ROOT, 'config', 'event-types.json'), 'utf8')) as { types: { name: string }[] };
    expect(config.types.length).toBeGreaterThan(0);
    for (const entry of ENTRIES) {
      for (const type of config.types) expect(code.get(entry), `${entry} lacks ${type.name}`).toContain(JSON.stringify(type.name));
    }
  });

  it('carry the AWS SDK, and require only Node.js built-ins and the modules they leave out', () => {
    const builtins = new Set(builtinModules);
    for (const entry of ENTRIES) {
      const modules = [...requiredModules(code.get(entry)!)];
      expect(modules.length, entry).toBeGreaterThan(0);
      expect(modules, entry).not.toContain('@aws-sdk/client-dynamodb');
      const left = externals.get(entry)!;
      for (const name of modules) {
        const ok = name.startsWith('node:') || builtins.has(name) || left.includes(name) || name.startsWith('@aws-sdk/nested-clients/');
        expect(ok, `${entry} requires ${name}, which it does not leave out`).toBe(true);
      }
    }
  });

  it('are CommonJS, with no import.meta (undefined in a CommonJS bundle)', () => {
    for (const entry of ENTRIES) {
      expect(code.get(entry), entry).not.toContain('import.meta');
      expect(code.get(entry), entry).not.toMatch(/^export /m);
    }
  });
});
