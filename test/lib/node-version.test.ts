/**
 * The tests run on the Node.js the functions run on. package.json pins the `node` package (a
 * Node.js binary for this platform, fetched by its install script) at an exact version whose
 * major is SERVICE_RUNTIME's; npm puts node_modules/.bin first on PATH, so `npm test` and every
 * other npm script and `npx` command run on that binary, whatever Node runs npm itself. The
 * README names that version.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, SERVICE_RUNTIME } from '../../lib/constructs/service-function';

interface PackageJson {
  readonly devDependencies: Readonly<Record<string, string>>;
  readonly allowScripts?: Readonly<Record<string, boolean>>;
}

const packageJson = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as PackageJson;
const pinned = packageJson.devDependencies.node ?? '';
const underNpmTest = process.env.npm_lifecycle_event === 'test';

describe('the Node.js the tests run on', () => {
  it('is pinned to one exact version of the Lambda runtime major', () => {
    expect(pinned, 'package.json devDependencies.node').toMatch(/^\d+\.\d+\.\d+$/);
    expect(SERVICE_RUNTIME.name).toBe(`nodejs${pinned.split('.')[0]}.x`);
  });

  it('is installed by `npm ci`: its install script is allowed and the binary is the pinned one', () => {
    expect(packageJson.allowScripts?.node, 'package.json allowScripts.node').toBe(true);
    const binary = join(PROJECT_ROOT, 'node_modules', '.bin', 'node');
    expect(execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim()).toBe(`v${pinned}`);
  });

  it('is the one the README names', () => {
    const named = [...readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8').matchAll(/Node\.js (\d+\.\d+\.\d+)/g)].map((m) => m[1]);
    expect(named.length).toBeGreaterThan(0);
    expect(new Set(named)).toEqual(new Set([pinned]));
  });

  it.runIf(underNpmTest)(`runs \`npm test\`${underNpmTest ? '' : ' (checked under npm test only)'}`, () => {
    expect(process.versions.node).toBe(pinned);
  });
});
