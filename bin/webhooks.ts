#!/usr/bin/env node
/**
 * The CDK app (`cdk.json` runs it with tsx): `npx cdk synth`, `npx cdk deploy`,
 * configured with context keys (see lib/config.ts), e.g. `-c stage=prod`.
 */
import { createWebhooksApp } from '../lib/app';
import { ConfigError } from '../lib/config';

try {
  createWebhooksApp();
} catch (error) {
  // A configuration mistake is the user's to fix: say what is wrong, without a stack trace.
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exitCode = 1;
}
