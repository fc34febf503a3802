/**
 * Builds the app exactly as `cdk synth` does (cdk.json's context, the cdk-nag
 * checks), for the CDK tests; and bare stacks with the same feature flags for
 * the tests of one construct.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { createWebhooksApp, type WebhooksApp } from '../../lib/app';
import { PROJECT_ROOT } from '../../lib/constructs/service-function';

/** The `context` of cdk.json: the feature flags and configuration defaults `cdk synth` uses. */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context?: Record<string, unknown> };
  return cdkJson.context ?? {};
}

/** Options of {@link buildTestApp}. */
export interface TestAppOptions {
  /** Context values over cdk.json's. */
  readonly context?: Record<string, unknown>;
  /**
   * Run esbuild for every function. Off by default: bundling every function takes
   * about half a minute and changes nothing in the template but asset hashes.
   * @default false
   */
  readonly bundle?: boolean;
}

/** cdk.json's context, bundling skipped unless asked for, then the options' context. */
function testContext(options: TestAppOptions): Record<string, unknown> {
  return {
    ...cdkJsonContext(),
    ...(options.bundle ? {} : { 'aws:cdk:bundling-stacks': [] }),
    ...options.context,
  };
}

/** A temporary output directory for a test app. */
const testOutdir = () => mkdtempSync(join(tmpdir(), 'webhooks-cdk-test-'));

/** The app of `cdk synth`, in a temporary output directory. */
export function buildTestApp(options: TestAppOptions = {}): WebhooksApp {
  return createWebhooksApp({ outdir: testOutdir(), context: testContext(options) });
}

/** What {@link buildTestStack} built. */
export interface TestStack {
  readonly app: App;
  /** The empty stack `Test`, for the construct under test and the siblings it needs. */
  readonly stack: Stack;
}

/**
 * A bare stack for the tests of one construct: cdk.json's context (so the
 * feature flags, e.g. minimized IAM policies, shape the template as in the
 * service's stack) and, as {@link buildTestApp}, no bundling unless asked for.
 * No validation plugins: cdk-nag and CDK's CloudFormation template validation
 * (whose engine takes seconds to start in every test process) run on the
 * whole stack, which holds every construct's resources (webhooks-stack.test.ts).
 */
export function buildTestStack(options: TestAppOptions = {}): TestStack {
  const app = new App({ outdir: testOutdir(), context: testContext(options), builtinCloudFormationValidation: false });
  return { app, stack: new Stack(app, 'Test') };
}

/** Removes the output directory of a test app. */
export function removeTestOutput(app: App | undefined): void {
  if (app) rmSync(app.outdir, { recursive: true, force: true });
}
