/**
 * The generated OpenAPI document, linted by Redocly CLI with its `recommended`
 * rules (through `.redocly.yaml`): no error and no warning, for the document
 * written at synth, the one `/openapi.json` serves, and one whose catalogue
 * has a configured type with local `$ref`s.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../lib/docs/openapi-document';
import { createEventCatalogue } from '../../lambdas/domain/event-catalogue';
import { withServer } from '../../lambdas/http/docs';
import { writeDocsBundle } from '../../lib/docs/docs-bundle';

const CLI = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
const CONFIG = resolve(import.meta.dirname, '../../.redocly.yaml');
/** A realistic base URL (the linter rightly flags example.com servers). */
const SERVED_FROM = 'https://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com/prod';

interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer: string; source: { ref: string } }[];
}
interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: LintProblem[];
}

/** Runs `redocly lint --format json` (no telemetry, no update check) and parses its report. */
function redoclyLint(args: readonly string[], cwd: string): Promise<LintReport> {
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      [CLI, 'lint', '--format', 'json', ...args],
      {
        cwd,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        // Exit code 1 only means "problems found": the JSON report says which.
        try {
          done(JSON.parse(stdout) as LintReport);
        } catch {
          fail(new Error(`redocly lint gave no JSON report (${error?.message ?? 'exit 0'}):\n${stderr}\n${stdout.slice(0, 2000)}`));
        }
      },
    );
  });
}

const readable = (p: LintProblem) =>
  `${p.severity} ${p.ruleId} ${p.location[0]?.source.ref ?? ''}${p.location[0]?.pointer ?? ''}: ${p.message}`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'webhooks-openapi-lint-'));
  // Exactly what synth writes, and what /openapi.json serves from it.
  writeDocsBundle(join(dir, 'synth'));
  writeFileSync(join(dir, 'served.json'), withServer(readFileSync(join(dir, 'synth', 'openapi.json')), SERVED_FROM));
  // A configured type with its own $defs, $ref, $id and examples: its schema must land in the document intact.
  const catalogue = createEventCatalogue([
    {
      name: 'invoice.paid',
      description: 'An invoice was paid.',
      payloadSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        $id: 'https://schemas.acme.test/invoice-paid.json',
        type: 'object',
        properties: { invoiceId: { type: 'string' }, amount: { $ref: '#/$defs/money' } },
        required: ['invoiceId', 'amount'],
        $defs: {
          money: {
            type: 'object',
            properties: { currency: { type: 'string' }, cents: { type: 'integer' } },
            required: ['currency', 'cents'],
          },
        },
        examples: [{ invoiceId: 'inv_1042', amount: { currency: 'EUR', cents: 12900 } }],
      },
    },
  ]);
  writeFileSync(
    join(dir, 'configured.json'),
    JSON.stringify(buildOpenApiDocument({ eventTypes: catalogue.types, serverUrl: SERVED_FROM })),
  );
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the OpenAPI document under Redocly lint', () => {
  it('has no error and no warning under the recommended rules (.redocly.yaml)', async () => {
    // One run per file: with several, the CLI prints one JSON report after another.
    const files = ['synth/openapi.json', 'served.json', 'configured.json'];
    const reports = await Promise.all(files.map((file) => redoclyLint(['--config', CONFIG, file], dir)));
    expect(reports.flatMap((r) => r.problems.map(readable))).toEqual([]);
    expect(reports.map((r) => r.totals)).toEqual(files.map(() => ({ errors: 0, warnings: 0, ignored: 0 })));
  }, 60_000);

  it('needs the one rule .redocly.yaml turns off only for the pair of paths it names', async () => {
    // Plain `recommended`, no configuration file: everything else stays clean.
    const report = await redoclyLint(['--extends', 'recommended', 'synth/openapi.json'], dir);
    expect(report.problems.map((p) => [p.severity, p.ruleId, p.location[0]?.pointer])).toEqual([
      ['warn', 'no-ambiguous-paths', '#/paths/~1workspaces~1{slug}~1webhooks~1deliveries~1{deliveryId}'],
      ['warn', 'no-ambiguous-paths', '#/paths/~1workspaces~1{slug}~1webhooks~1{endpointId}~1health'],
      ['warn', 'no-ambiguous-paths', '#/paths/~1workspaces~1{slug}~1webhooks~1{endpointId}~1recover'],
    ]);
    expect(report.problems[0]!.message).toContain(
      '`/workspaces/{slug}/webhooks/{endpointId}/rotate-secret` and `/workspaces/{slug}/webhooks/deliveries/{deliveryId}`',
    );
    expect(readFileSync(CONFIG, 'utf8')).toMatch(/^\s+no-ambiguous-paths: off$/m);
  }, 60_000);
});
