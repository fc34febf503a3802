/**
 * Synthesizes a stage's CloudFormation template in-process, from the context `cdk synth` would
 * use (cdk.json's `context`, then the command line's `-c key=value`), for the programs that read
 * it before a deploy (`npm run preflight`). The functions are not bundled: bundling changes asset
 * hashes only, never a name, a reservation or a setting.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWebhooksApp } from './app';
import { PROJECT_ROOT } from './constructs/service-function';

/** One resource of a synthesized template. */
export interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}

/** The parts of a synthesized CloudFormation template the pre-deploy checks read. */
export interface StackTemplate {
  readonly Resources: Record<string, TemplateResource>;
  readonly Outputs?: Record<string, unknown>;
}

/** A stage's stack as `cdk synth` would produce it. */
export interface SynthesizedStage {
  /** The stage name (`-c stage=…`). */
  readonly stage: string;
  /** The CloudFormation stack name (`Webhooks-<stage>`). */
  readonly stackName: string;
  /** The stack's template. */
  readonly template: StackTemplate;
  /** The lowest CDK bootstrap version the stack and its assets need. */
  readonly requiredBootstrapVersion: number;
  /** The SSM parameter holding the bootstrap version (`/cdk-bootstrap/<qualifier>/version`). */
  readonly bootstrapVersionParameter: string;
}

/** The `context` of the project's cdk.json (the feature flags and the settings' values). */
function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context?: Record<string, unknown> };
  return cdkJson.context ?? {};
}

/**
 * Builds the app with cdk.json's context overridden by `context` (values as the command line gives
 * them: strings), synthesizes it with its cdk-nag checks, and returns the stage's stack.
 * Throws `ConfigError` (lib/config.ts) on an invalid setting, as `cdk synth` fails on one.
 */
export function synthesizeStage(context: Readonly<Record<string, string>> = {}): SynthesizedStage {
  const outdir = mkdtempSync(join(tmpdir(), 'webhooks-synth-'));
  try {
    const { app, config, stack } = createWebhooksApp({
      outdir,
      context: { ...cdkJsonContext(), ...context, 'aws:cdk:bundling-stacks': [] },
    });
    const assembly = app.synth();
    const artifact = assembly.getStackByName(stack.stackName);
    const versions = [artifact, ...artifact.dependencies]
      .map((a) => (a.manifest.properties as { requiresBootstrapStackVersion?: number } | undefined)?.requiresBootstrapStackVersion)
      .filter((v): v is number => typeof v === 'number');
    return {
      stage: config.stage,
      stackName: stack.stackName,
      template: artifact.template as StackTemplate,
      requiredBootstrapVersion: Math.max(0, ...versions),
      bootstrapVersionParameter: artifact.bootstrapStackVersionSsmParameter ?? '/cdk-bootstrap/hnb659fds/version',
    };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
