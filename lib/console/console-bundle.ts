/**
 * Build-time only (CDK synth, local stack): bundles the console (`console/`)
 * with esbuild into content-hashed files plus an `index.html` that loads them
 * (docs/architecture.md#console).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { CONSOLE_INDEX } from '#lambdas/contract/deployment';

/** The console's source folder. */
const CONSOLE_SOURCE = fileURLToPath(new URL('../../console/', import.meta.url));

/** What {@link writeConsoleBundle} wrote. */
export interface ConsoleBundle {
  /** The hashed script the page loads (a file name in the folder). */
  readonly script: string;
  /** The hashed stylesheet the page loads. */
  readonly stylesheet: string;
  /** Every file written, index included. */
  readonly files: readonly string[];
}

/** Bundles the console into `dir` (emptied first): `index.html` and its hashed assets. */
export function writeConsoleBundle(dir: string): ConsoleBundle {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const result = buildSync({
    entryPoints: [join(CONSOLE_SOURCE, 'src', 'main.tsx')],
    outdir: dir,
    entryNames: 'console-[hash]',
    assetNames: 'console-[hash]',
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2022', 'chrome115', 'firefox115', 'safari16'],
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: join(CONSOLE_SOURCE, 'tsconfig.json'),
    define: { 'process.env.NODE_ENV': '"production"' },
    legalComments: 'none',
    metafile: true,
    logLevel: 'silent',
  });
  const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
  const script = outputs.find((f) => f.endsWith('.js'));
  const stylesheet = outputs.find((f) => f.endsWith('.css'));
  if (!script || !stylesheet) throw new Error(`console build wrote ${outputs.join(', ')}: expected one .js and one .css`);
  const template = readFileSync(join(CONSOLE_SOURCE, 'index.html'), 'utf8');
  writeFileSync(
    join(dir, CONSOLE_INDEX),
    template.replace('%SCRIPT%', `console/${script}`).replace('%STYLESHEET%', `console/${stylesheet}`),
  );
  return { script, stylesheet, files: [CONSOLE_INDEX, ...outputs] };
}
