#!/usr/bin/env node
/** The CDK app (`cdk.json` runs it with tsx): `npx cdk synth`, `npx cdk deploy`. */
import { createWebhooksApp } from '../lib/app';

createWebhooksApp();
