/**
 * The console's build (lib/console/console-bundle.ts), as synth and the local stack run it:
 * content-hashed file names that only change with the content, an `index.html` loading
 * exactly those files, the initial-JavaScript budget (at most 150 KiB gzip, docs/architecture.md#console), and
 * nothing of the server side nor any third-party URL in what the browser gets.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_INDEX } from '../../lambdas/contract/deployment';
import { writeConsoleBundle, type ConsoleBundle } from '../../lib/console/console-bundle';

/** The most initial JavaScript the console may send, gzip-compressed. */
const BUDGET_BYTES = 150 * 1024;
/** URLs that are names, not requests: the XML, SVG and XLink namespaces. */
const NAMESPACE_URLS = new Set([
  'http://www.w3.org/2000/svg',
  'http://www.w3.org/1999/xlink',
  'http://www.w3.org/1999/xhtml',
  'http://www.w3.org/XML/1998/namespace',
  'http://www.w3.org/1998/Math/MathML',
]);

/**
 * Example URLs in help text and sample payloads (`e.g. https://hooks.example.com/...`): hosts
 * reserved for documentation (RFC 2606), which name no real server.
 */
const EXAMPLE_HOST = /^https?:\/\/([a-z0-9-]+\.)*example(\.(com|org|net))?(:\d+)?(\/|$)/i;

const dirs: string[] = [];
let first: ConsoleBundle;
let second: ConsoleBundle;
let dir: string;

/** A fresh temporary folder, removed after the file's tests. */
function tempDir(): string {
  const made = mkdtempSync(join(tmpdir(), 'webhooks-console-bundle-'));
  dirs.push(made);
  return made;
}

const read = (name: string) => readFileSync(join(dir, name), 'utf8');

beforeAll(() => {
  dir = tempDir();
  first = writeConsoleBundle(dir);
  second = writeConsoleBundle(tempDir());
});

afterAll(() => {
  for (const made of dirs) rmSync(made, { recursive: true, force: true });
});

describe('the console bundle', () => {
  it('is index.html plus one script and one stylesheet named by their content hash', () => {
    expect(first.script).toMatch(/^console-[A-Z0-9]+\.js$/i);
    expect(first.stylesheet).toMatch(/^console-[A-Z0-9]+\.css$/i);
    expect([...first.files].sort()).toEqual([CONSOLE_INDEX, first.script, first.stylesheet].sort());
    expect(readdirSync(dir).sort()).toEqual([...first.files].sort());
  });

  it('gets the same names when the same sources are built again (a new name only for new content)', () => {
    expect(second).toEqual(first);
  });

  it('empties the folder first, so a rebuild leaves no stale asset behind', () => {
    const again = tempDir();
    writeFileSync(join(again, 'console-STALE123.js'), 'an older build');
    writeConsoleBundle(again);
    expect(readdirSync(again).sort()).toEqual([...first.files].sort());
  });

  it('has an index.html that loads exactly its script (as a module) and its stylesheet, relative to /console', () => {
    const html = read(CONSOLE_INDEX);
    expect(html).not.toMatch(/%SCRIPT%|%STYLESHEET%/);
    const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1]!);
    expect(scripts).toEqual([` type="module" src="console/${first.script}"`]);
    const stylesheets = [...html.matchAll(/<link\b[^>]*rel="stylesheet"[^>]*>/g)].map((m) => m[0]);
    expect(stylesheets).toEqual([`<link rel="stylesheet" href="console/${first.stylesheet}" />`]);
    // No inline script or style: the CSP would refuse them.
    expect(html).not.toMatch(/<script\b[^>]*>[^<]+<\/script>/);
    expect(html).not.toMatch(/<style\b|\sstyle=/);
  });

  it('keeps the initial JavaScript within 150 KiB gzip', () => {
    const gzipped = gzipSync(readFileSync(join(dir, first.script))).length;
    expect(gzipped, `${first.script} is ${(gzipped / 1024).toFixed(1)} KiB gzip (budget ${BUDGET_BYTES / 1024} KiB)`).toBeLessThanOrEqual(
      BUDGET_BYTES,
    );
  });

  it('holds no server code: no zod, no AWS SDK', () => {
    const code = read(first.script);
    for (const marker of ['zod', 'ZodError', '@aws-sdk', 'DynamoDB', 'process.env']) expect(code, marker).not.toContain(marker);
  });

  it('names no host to ask for anything: the only absolute URLs are XML/SVG namespace names and documentation examples', () => {
    for (const file of first.files) {
      const urls = [...read(file).matchAll(/https?:\/\/[^\s"'`)<>\\]*/g)].map((m) => m[0]);
      expect(
        urls.filter((url) => !NAMESPACE_URLS.has(url) && !EXAMPLE_HOST.test(url)),
        file,
      ).toEqual([]);
      // Nor a protocol-relative one (`//host/...` in a src, href, url() or import).
      expect(read(file), file).not.toMatch(/(?:src=|href=|url\(|import\(?)\s*["']?\/\/[a-z0-9]/i);
    }
  });
});
