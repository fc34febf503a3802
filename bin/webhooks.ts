#!/usr/bin/env node
/**
 * The CDK app (`cdk.json` runs it with tsx): `npx cdk synth`, `npx cdk deploy`,
 * configured with context keys (see lib/config.ts), e.g. `-c stage=prod`, which also
 * reads the stage's settings file `stages/prod.json` when there is one.
 */
import { createWebhooksApp } from '../lib/app';
import { ConfigError, minimumConcurrencyQuotaOf, reservedConcurrencyOf } from '../lib/config';

/**
 * `WEBHOOKS_SKIP_BUNDLING=1` synthesizes the template without building the functions' bundles (as
 * `cdk list` does): for checks that read only the template (docs/deploy.md's own test). Never for a
 * deploy: the assets would be placeholders.
 */
const skipBundling = process.env.WEBHOOKS_SKIP_BUNDLING === '1';

try {
  const { config, stageFile } = createWebhooksApp(skipBundling ? { postCliContext: { 'aws:cdk:bundling-stacks': [] } } : {});
  // Say which settings the stage was built with: a stage without a file gets cdk.json's.
  console.error(`Stage ${config.stage}: settings from cdk.json${stageFile ? `, ${stageFile}` : ''} and the command line`);
  // What CloudFormation cannot check before it starts: Lambda refuses a reservation that leaves under 100 unreserved.
  const reserved = reservedConcurrencyOf(config);
  if (reserved > 0)
    console.error(
      `Stage ${config.stage} reserves ${reserved} concurrent Lambda executions (mcpReservedConcurrency ${config.mcpReservedConcurrency ?? 'null'}, publisherReservedConcurrency ${config.publisherReservedConcurrency ?? 'null'}): the account's Lambda concurrency quota must be at least ${minimumConcurrencyQuotaOf(config)} plus what other functions reserve, or set both to null (npm run preflight checks).`,
    );
} catch (error) {
  // A configuration mistake is the user's to fix: say what is wrong, without a stack trace.
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exitCode = 1;
}
