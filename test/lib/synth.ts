/**
 * Builds the app exactly as `cdk synth` does (cdk.json's context, the cdk-nag
 * checks), for the CDK tests.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/** The app of `cdk synth`, in a temporary output directory. */
export function buildTestApp(options: TestAppOptions = {}): WebhooksApp {
  return createWebhooksApp({
    outdir: mkdtempSync(join(tmpdir(), 'webhooks-cdk-test-')),
    context: {
      ...cdkJsonContext(),
      ...(options.bundle ? {} : { 'aws:cdk:bundling-stacks': [] }),
      ...options.context,
    },
  });
}
