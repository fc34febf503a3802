/**
 * docs/deploy.md as a platform team follows it: every command it gives that can run here does run
 * (the synth, the pre-flight against a mocked account, each `jq` over a sample outputs file), and the
 * others are checked as far as they can be without an AWS account: every shell block parses, every
 * `npm run` script exists, every `cdk` flag is one cdk knows, and the fix commands it shows are the
 * ones the pre-flight prints.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { apiGatewayRoleCommands } from '../../bin/preflight/api-gateway-role';
import { concurrencyIncreaseCommand } from '../../bin/preflight/concurrency';
import { main as preflight } from '../../bin/preflight/run';
import { CONFIG_KEYS, parseConfig } from '../../lib/config';
import { synthesizeStage, type SynthesizedStage } from '../../lib/synth-template';
import { setAccount } from '../bin/preflight-account';
import { read, ROOT, section } from './markdown';

const run = promisify(execFile);
const guide = read('docs/deploy.md');
const FIXTURE = 'test/docs/fixtures/outputs-prod.json';

/** The fenced blocks of one language, at any indentation (a block inside a list item too), unindented. */
function fenced(text: string, lang: string): string[] {
  return [...text.matchAll(new RegExp('^( *)```' + lang + '\\n([\\s\\S]*?)^\\1```$', 'gm'))].map((m) =>
    m[2]!
      .split('\n')
      .map((line) => line.slice(m[1]!.length))
      .join('\n'),
  );
}

/**
 * The commands of a shell block, one per logical line (continuations joined, end-of-line comments
 * dropped), with the block's plain `NAME=value` variables substituted, as a reader's shell runs them.
 */
function commandsOf(block: string): string[] {
  const vars = new Map<string, string>();
  const commands: string[] = [];
  for (const raw of block.replace(/\\\n\s*/g, ' ').split('\n')) {
    const line = raw.replace(/\s+#\s.*$/, '').trim();
    if (line === '') continue;
    const assignment = /^([A-Z_]+)=([^\s$`'"]+)$/.exec(line);
    if (assignment) vars.set(assignment[1]!, assignment[2]!);
    else commands.push(line.replace(/\$\{?([A-Z_]+)\}?/g, (whole, name: string) => vars.get(name) ?? whole));
  }
  return commands;
}

const shBlocks = fenced(guide, 'sh');
const commands = shBlocks.flatMap(commandsOf);

/** The arguments of a command after `npm run <script> --`, split as the shell splits plain words. */
const argsAfter = (command: string, script: string) =>
  command
    .slice(command.indexOf(`npm run ${script} --`) + `npm run ${script} --`.length)
    .trim()
    .split(/\s+/);

/** The stage synthesized once per set of settings, for the pre-flight runs. */
const synthesized = new Map<string, SynthesizedStage>();
const synthesize = (context: Readonly<Record<string, string>>) => {
  const key = JSON.stringify(context);
  if (!synthesized.has(key)) synthesized.set(key, synthesizeStage(context));
  return synthesized.get(key)!;
};

describe('docs/deploy.md, its shell commands', () => {
  it('parse: every sh block is valid bash', () => {
    expect(shBlocks.length).toBeGreaterThan(10);
    for (const block of shBlocks) execFileSync('bash', ['-n'], { input: block });
  });

  it('name npm scripts that exist', () => {
    const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
    const named = [...guide.matchAll(/\bnpm run ([\w:-]+)/g)].map((m) => m[1]!);
    expect(named).toEqual(expect.arrayContaining(['preflight', 'deploy', 'admin', 'smoke']));
    expect(named.filter((name) => !scripts.includes(name))).toEqual([]);
  });

  it('give cdk only flags it knows', { timeout: 120_000 }, async () => {
    /** The long flags each cdk command is given, directly or through npm run deploy. */
    const flags = new Map<string, Set<string>>();
    const add = (sub: string, words: string[]) => {
      const set = flags.get(sub) ?? flags.set(sub, new Set()).get(sub)!;
      for (const word of words) if (/^--[a-z]/.test(word)) set.add(word.replace(/=.*$/, ''));
    };
    for (const command of commands) {
      const cdk = /\bnpx cdk (\w+)(.*)$/.exec(command);
      if (cdk) add(cdk[1]!, cdk[2]!.trim().split(/\s+/));
      if (command.includes('npm run deploy --'))
        add(
          'deploy',
          argsAfter(command, 'deploy').filter((w) => !['--region', '--profile'].includes(w)),
        );
    }
    expect([...flags.keys()].sort()).toEqual(['bootstrap', 'deploy', 'destroy', 'diff', 'synth']);
    expect([...flags.get('deploy')!]).toEqual(expect.arrayContaining(['--outputs-file']));
    for (const [sub, used] of flags) {
      const { stdout } = await run('npx', ['cdk', sub, '--help'], {
        cwd: ROOT,
        env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true' },
      });
      expect(
        [...used].filter((flag) => !stdout.includes(flag)),
        `cdk ${sub}`,
      ).toEqual([]);
    }
  });

  it("build the stage offline: the first deploy's synth runs as written", { timeout: 600_000 }, async () => {
    const synth = commands.find((c) => c.startsWith('npx cdk synth'));
    expect(synth).toBe('npx cdk synth -c stage=prod');
    const out = mkdtempSync(join(tmpdir(), 'deploy-guide-synth-'));
    try {
      // Into a temporary folder, so the checkout's cdk.out is left alone. Without the functions'
      // bundles: CI's own `cdk synth` and test/contract/lambda-bundles.test.ts build those.
      await run('bash', ['-c', `${synth} --quiet -o ${out}`], {
        cwd: ROOT,
        env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true', WEBHOOKS_SKIP_BUNDLING: '1' },
        timeout: 590_000,
      });
      expect(existsSync(join(out, 'Webhooks-prod.template.json'))).toBe(true);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe('docs/deploy.md, the pre-flight', () => {
  const preflightCommands = () => commands.filter((c) => c.includes('npm run preflight --'));

  it('passes as the guide runs it, in a ready account', { timeout: 300_000 }, async () => {
    expect(preflightCommands().length).toBeGreaterThan(0);
    for (const command of preflightCommands()) {
      setAccount();
      const lines: string[] = [];
      expect(await preflight(argsAfter(command, 'preflight'), { synthesize, print: (l) => lines.push(l) }), lines.join('\n')).toBe(0);
    }
  });

  it('prints what the guide shows for a new account', { timeout: 300_000 }, async () => {
    const text = section(guide, '## Pre-flight')!;
    const [command] = commandsOf(fenced(text, 'sh')[0]!);
    const [shown] = fenced(text, 'text');
    setAccount({ cloudwatchRoleArn: null, concurrency: { limit: 10, unreserved: 10 } });
    const lines: string[] = [];
    expect(await preflight(argsAfter(command!, 'preflight'), { synthesize, print: (l) => lines.push(l) })).toBe(1);
    // On a difference, paste the printed report (the Received side) into the guide's text block.
    expect(shown).toBe(lines.join('\n') + '\n');
  });

  it('shows the fix commands the pre-flight prints for the API Gateway role and the concurrency quota', () => {
    const target = { account: '$ACCOUNT', region: '$REGION', partition: 'aws', stackName: 'Webhooks-prod', profileFlag: '' };
    const lines = new Set(shBlocks.flatMap((b) => b.split('\n')));
    for (const command of [...apiGatewayRoleCommands(target), concurrencyIncreaseCommand(target, 1000)]) expect(lines).toContain(command);
  });
});

describe('docs/deploy.md, the outputs file', () => {
  const jqCommands = () => [...guide.matchAll(/jq -r '([^']*)' outputs-prod\.json/g)].map((m) => m[1]!);

  it('is read by jq commands that work on a sample of it', async () => {
    expect(jqCommands().length).toBeGreaterThan(2);
    for (const filter of new Set(jqCommands())) {
      const { stdout } = await run('jq', ['-r', filter, FIXTURE], { cwd: ROOT }).catch((e: Error) => {
        throw new Error(`jq ${filter} (jq is needed: apt-get install jq): ${e.message}`);
      });
      expect(stdout.trim(), filter).not.toMatch(/^(null)?$/);
    }
  });

  it("sample holds the stack's outputs under its name, as cdk deploy --outputs-file writes them", { timeout: 300_000 }, () => {
    const sample = JSON.parse(readFileSync(join(ROOT, FIXTURE), 'utf8')) as Record<string, Record<string, string>>;
    const stage = synthesize({ stage: 'prod' });
    expect(Object.keys(sample)).toEqual([stage.stackName]);
    const outputs = Object.keys(stage.template.Outputs ?? {});
    expect(Object.keys(sample[stage.stackName]!).filter((key) => !outputs.includes(key))).toEqual([]);
    const read = jqCommands().map((filter) => /\.\["Webhooks-prod"\]\.(\w+)/.exec(filter)?.[1]);
    expect(read.filter((key) => key === undefined || !outputs.includes(key))).toEqual([]);
  });
});

describe('docs/deploy.md, its prerequisites and settings files', () => {
  it('list jq and the AWS CLI v2, and document the API Gateway role and the MCP reservation', () => {
    const prerequisites = section(guide, '## Prerequisites')!;
    expect(prerequisites).toContain('`jq`');
    expect(prerequisites).toContain('AWS CLI v2');
    expect(section(guide, '### The API Gateway CloudWatch role')).toContain('apiGatewayAccountRole');
    expect(section(guide, '### Lambda concurrency and the MCP reservation')).toContain('mcpReservedConcurrency=null');
  });

  it('shows settings files that are valid stages', () => {
    const files = fenced(section(guide, '### One settings file per stage')!, 'json');
    // The guide shows the checked-in files as they are.
    expect(files.map((file) => JSON.parse(file) as unknown)).toEqual(
      ['stages/dev.json', 'stages/prod.example.json'].map((path) => JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as unknown),
    );
    for (const file of files) {
      const settings = JSON.parse(file) as Record<string, unknown>;
      expect(settings).not.toHaveProperty('stage');
      expect(Object.keys(settings).filter((key) => !(CONFIG_KEYS as string[]).includes(key))).toEqual([]);
      expect(() => parseConfig(settings)).not.toThrow();
    }
  });
});
