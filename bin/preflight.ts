#!/usr/bin/env node
/**
 * `npm run preflight -- [--region R] [--profile P] [-c key=value ...]`: read-only checks that a
 * deploy of the stage can succeed in the account and region, each failure with the command that
 * fixes it (docs/deploy.md#pre-flight). Exit 0 when ready, 1 when not.
 */
import { main } from './preflight/run';

process.exitCode = await main(process.argv.slice(2));
