/**
 * Adapters of a running function, built once per container from its
 * environment (cold start), then reused.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { deploymentCatalogue } from '../domain/configured-event-types';
import type { OperationDeps } from '../operations/context';
import { tableFromEnv } from '../store/client';
import { rateLimiterFor, type RateLimiter } from './rate-limiter';

/** The service's logger (Powertools; `POWERTOOLS_*` env configures it). */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'webhooks' });

/** Everything a REST handler needs at run time. */
export interface Runtime {
  readonly deps: OperationDeps;
  readonly rateLimiter: RateLimiter;
}

/** Builds a runtime from environment variables. */
export function runtimeFromEnv(env: NodeJS.ProcessEnv = process.env): Runtime {
  const table = tableFromEnv(env);
  const rateTable = env.RATE_LIMIT_TABLE_NAME ? { ...table, tableName: env.RATE_LIMIT_TABLE_NAME } : undefined;
  return {
    deps: {
      table,
      now: () => new Date(),
      eventTypes: deploymentCatalogue(),
      // Local-development switch (DESIGN §6); the deployed stack never sets it.
      urlPolicy: { allowLoopback: env.ALLOW_LOOPBACK_TARGETS === 'true' },
    },
    rateLimiter: rateLimiterFor(rateTable, env.RATE_LIMITS),
  };
}

let cached: Runtime | undefined;

/** The container's runtime, built on first use. */
export function defaultRuntime(): Runtime {
  cached ??= runtimeFromEnv();
  return cached;
}
