/**
 * The reference tables of the deploy guide and the runbook say what the code does: a platform
 * engineer deploys and operates a stage from docs/deploy.md and docs/operations.md without reading
 * the code, so the settings they list are the ones the app reads, with the defaults it takes, the
 * production example is a complete, valid stage, the outputs are the stack's, and the metrics are
 * the ones the functions write (name, unit, dimensions).
 */
import { rmSync } from 'node:fs';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRICS } from '../../lambdas/contract/metrics';
import type { WebhooksApp } from '../../lib/app';
import { CONFIG_KEYS, parseConfig } from '../../lib/config';
import { buildTestApp } from '../lib/synth';
import { codeSpan, read, section as sectionOf, tables } from './markdown';

/** The text under a heading, up to the next heading of the same or a higher level (code blocks are not headings). */
function section(text: string, heading: string): string {
  const found = sectionOf(text, heading);
  expect(found, `heading ${heading}`).toBeDefined();
  return found!;
}

/** The body rows of the first markdown table of a text, as trimmed cells (the header and the `|---|` rule dropped). */
function tableRows(text: string): string[][] {
  const [first] = tables(text);
  expect(first?.rows.length ?? 0, 'a table').toBeGreaterThan(0);
  return first!.rows;
}

/** A cell's code span (`` `name` `` → `name`). */
function code(cell: string): string {
  const span = codeSpan(cell);
  expect(span, `${cell} is one code span`).toBeDefined();
  return span!;
}

/** The fenced code blocks of one language in a text. */
const fenced = (text: string, lang: string) =>
  [...text.matchAll(new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```$', 'gm'))].map((m) => m[1]!);

const deploy = read('docs/deploy.md');
const operations = read('docs/operations.md');

describe('docs/deploy.md, Settings', () => {
  it('lists exactly the context keys the app reads, each once', () => {
    const keys = tableRows(section(deploy, '## Settings')).map((row) => code(row[0]!));
    expect(new Set(keys).size, 'no key listed twice').toBe(keys.length);
    expect([...keys].sort()).toEqual([...CONFIG_KEYS].sort());
  });

  it('gives each key the default the app takes when the key is left out', () => {
    const defaults = parseConfig({}) as unknown as Record<string, unknown>;
    const documented = Object.fromEntries(
      tableRows(section(deploy, '## Settings')).map(([key, value]) => {
        const span = code(value!);
        // A string default is written bare (`dev`); any other as JSON (`30`, `null`, `[]`, `{}`).
        return [code(key!), typeof defaults[code(key!)] === 'string' ? span : (JSON.parse(span) as unknown)];
      }),
    );
    expect(documented).toEqual(defaults);
  });
});

describe('docs/deploy.md, A production stage', () => {
  /** The section's text and the `context` of its one cdk.json example. */
  function example(): { text: string; context: Record<string, unknown> } {
    const text = section(deploy, '### A production stage');
    const json = fenced(text, 'json');
    expect(json).toHaveLength(1);
    return { text, context: (JSON.parse(json[0]!) as { context: Record<string, unknown> }).context };
  }

  it('is a cdk.json context with every setting, each valid and taken as given', () => {
    const { context } = example();
    expect(Object.keys(context).sort()).toEqual([...CONFIG_KEYS].sort());
    // parseConfig throws ConfigError on any invalid value; equality shows none fell back to a default.
    expect(parseConfig(context)).toEqual(context);
  });

  it('gives the same stage on the command line', () => {
    const { text, context } = example();
    const [sh] = fenced(text, 'sh');
    const command = sh!.replace(/\\\n/g, ' ');
    expect(command).toMatch(/^npx cdk deploy /);
    const raw: Record<string, string> = {};
    for (const [, key, value] of command.matchAll(/-c ([A-Za-z]+)=('[^']*'|\S*)/g)) raw[key!] = value!.replace(/^'(.*)'$/, '$1');
    expect(Object.keys(raw).length).toBeGreaterThan(5);
    expect(parseConfig(raw)).toEqual(parseConfig(context));
  });
});

describe('docs/deploy.md, Outputs', () => {
  let built: WebhooksApp | undefined;
  let outputs: string[] = [];

  beforeAll(() => {
    built = buildTestApp();
    outputs = Object.keys(Template.fromStack(built.stack).toJSON().Outputs as Record<string, unknown>);
  }, 120_000);

  afterAll(() => {
    if (built) rmSync(built.app.outdir, { recursive: true, force: true });
  });

  it('names exactly the stack outputs', () => {
    const documented = tableRows(section(deploy, '### Outputs')).map((row) => code(row[0]!));
    expect(outputs.length).toBeGreaterThan(0);
    expect([...documented].sort()).toEqual([...outputs].sort());
  });
});

describe('docs/operations.md, Metrics', () => {
  it('lists every metric the functions write, with its unit and dimensions', () => {
    const documented = tableRows(section(operations, '## Metrics')).map(([name, unit, dimensions]) => ({
      name: code(name!),
      unit,
      dimensions: dimensions!.split(',').map((d) => d.trim()),
    }));
    const emitted = Object.values(METRICS).map((m) => ({ name: m.name, unit: m.unit, dimensions: ['stage', ...m.dimensions] }));
    const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
    expect(documented.sort(byName)).toEqual(emitted.sort(byName));
  });
});
