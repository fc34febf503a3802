/**
 * One settings file per stage (lib/config.ts): `-c stage=<name>` reads `stages/<name>.json` over
 * cdk.json's context, the command line wins over both, and a file with an unknown key fails synth
 * with the configuration's one message. Each case runs against its own project root (a cdk.json
 * and a stages/ folder in a temporary directory); the repository's own samples are checked too.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { createWebhooksApp } from '../../lib/app';
import { ConfigError, DEFAULT_CONFIG, loadStageConfig, STAGES_DIR, type LoadedConfig } from '../../lib/config';
import { PROJECT_ROOT } from '../../lib/constructs/service-function';
import { logicalId } from './template';
import { cdkJsonContext } from './synth';

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** A project root with the repository's cdk.json and the given stage files (`name` → contents, objects as JSON). */
function projectWith(files: Record<string, unknown>): string {
  const root = mkdtempSync(join(tmpdir(), 'webhooks-stages-'));
  roots.push(root);
  copyFileSync(join(PROJECT_ROOT, 'cdk.json'), join(root, 'cdk.json'));
  mkdirSync(join(root, STAGES_DIR));
  for (const [name, contents] of Object.entries(files))
    writeFileSync(join(root, STAGES_DIR, name), typeof contents === 'string' ? contents : JSON.stringify(contents));
  return root;
}

/** What `cdk synth -c key=value ...` hands the app: cdk.json's context, the command line's values over it. */
function load(root: string, commandLine: Record<string, unknown> = {}): LoadedConfig {
  return loadStageConfig(new App({ context: { ...cdkJsonContext(), ...commandLine } }), root);
}

/** The one ConfigError message a load fails with. */
function problemOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error('expected a ConfigError');
}

describe('a stage settings file', () => {
  it("is read for its stage, over cdk.json's values", () => {
    const root = projectWith({ 'prod.json': { alarmEmail: 'oncall@example.com', logRetentionDays: 90, mcpReservedConcurrency: null } });
    const { config, stageFile } = load(root, { stage: 'prod' });
    expect(stageFile).toBe('stages/prod.json');
    expect(config).toEqual({
      ...DEFAULT_CONFIG,
      stage: 'prod',
      alarmEmail: 'oncall@example.com',
      logRetentionDays: 90,
      mcpReservedConcurrency: null,
    });
  });

  it("is not read for another stage: that stage gets cdk.json's values", () => {
    const root = projectWith({ 'prod.json': { logRetentionDays: 90 } });
    expect(load(root, { stage: 'staging' })).toEqual({ config: { ...DEFAULT_CONFIG, stage: 'staging' }, stageFile: null });
    // Without -c stage, the stage is cdk.json's: dev.
    expect(load(root)).toEqual({ config: DEFAULT_CONFIG, stageFile: null });
  });

  it('loses to the command line (-c key=value), which wins over both', () => {
    const root = projectWith({
      'prod.json': { logRetentionDays: 90, publisherReservedConcurrency: 200, alarmEmail: 'oncall@example.com' },
    });
    const { config } = load(root, { stage: 'prod', logRetentionDays: '14', publisherReservedConcurrency: 'null' });
    expect(config.logRetentionDays).toBe(14);
    expect(config.publisherReservedConcurrency).toBeNull();
    // What the command line did not set comes from the file.
    expect(config.alarmEmail).toBe('oncall@example.com');
  });

  it("takes a command-line value equal to cdk.json's as cdk.json's (CDK merges the two): the file wins over it", () => {
    const root = projectWith({ 'prod.json': { removalPolicy: 'destroy' } });
    expect(cdkJsonContext().removalPolicy).toBe('retain');
    expect(load(root, { stage: 'prod', removalPolicy: 'retain' }).config.removalPolicy).toBe('destroy');
  });

  it('refuses an unknown key, "stage", and bad values, all in one message naming the file', () => {
    const root = projectWith({ 'prod.json': { stage: 'other', logRetention: 90, mcpReservedConcurrency: 0 } });
    const message = problemOf(() => load(root, { stage: 'prod' }));
    expect(message).toMatch(/^Invalid CDK context configuration:/);
    expect(message).toContain('stages/prod.json: remove "stage": the file\'s name is the stage');
    expect(message).toContain('stages/prod.json: unknown setting "logRetention" (known: ');
    expect(message).toContain('logRetentionDays');
    expect(message).toMatch(/mcpReservedConcurrency must be an integer from 1 to 1000, or null/);
  });

  it('refuses a file that is not a JSON object', () => {
    expect(problemOf(() => load(projectWith({ 'prod.json': '{"alarmEmail": ' }), { stage: 'prod' }))).toMatch(
      /stages\/prod\.json is not valid JSON/,
    );
    expect(problemOf(() => load(projectWith({ 'prod.json': '[]' }), { stage: 'prod' }))).toMatch(
      /stages\/prod\.json must be a JSON object of settings/,
    );
  });

  it("reaches the stack: the template is the stage file's", () => {
    const root = projectWith({ 'qa.json': { publisherReservedConcurrency: 7, deadLetterMaxConcurrency: 3 } });
    const outdir = mkdtempSync(join(tmpdir(), 'webhooks-stages-out-'));
    roots.push(outdir);
    const built = createWebhooksApp({ outdir, context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], stage: 'qa' } }, root);
    expect(built.stageFile).toBe('stages/qa.json');
    expect(built.stack.stackName).toBe('Webhooks-qa');
    const template = Template.fromStack(built.stack);
    const resources = template.toJSON().Resources as Record<string, { Properties: Record<string, unknown> }>;
    expect(resources[logicalId(built.stack.pipeline.publisher.function)]!.Properties.ReservedConcurrentExecutions).toBe(7);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalId(built.stack.pipeline.deadLetterConsumer.function) },
      ScalingConfig: { MaximumConcurrency: 3 },
    });
  }, 120_000);
});

describe("the repository's samples", () => {
  it('stages/dev.json is the default stage as it is', () => {
    const { config, stageFile } = load(PROJECT_ROOT);
    expect(stageFile).toBe('stages/dev.json');
    expect(config).toEqual(DEFAULT_CONFIG);
  });

  it('stages/prod.example.json is valid for a prod stage (copied to stages/prod.json)', () => {
    const root = projectWith({});
    copyFileSync(join(PROJECT_ROOT, STAGES_DIR, 'prod.example.json'), join(root, STAGES_DIR, 'prod.json'));
    const { config } = load(root, { stage: 'prod' });
    expect(config).toMatchObject({ stage: 'prod', removalPolicy: 'retain', alarmEmail: 'oncall@example.com' });
    expect(config.consoleOidc).toMatchObject({ issuer: 'https://login.example.com/oauth2/default', groupsClaim: 'groups' });
  });

  it('stages/prod.example.json is never read as a stage of its own (a stage name has no dot)', () => {
    expect(problemOf(() => load(PROJECT_ROOT, { stage: 'prod.example' }))).toMatch(/stage must be lower-case letters/);
  });
});
