import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // DynamoDB Local is started once per run and torn down even on failure.
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // Most test files wait on DynamoDB Local, child processes, loopback servers or Chromium rather
    // than compute, so two run at once even on two cores (vitest's default is one fewer than the
    // cores: a single worker on a two-core CI machine).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // No EMF metric lines in test output; test/functions/metrics.test.ts turns them on for itself.
    env: { POWERTOOLS_LOG_LEVEL: 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true', AWS_REGION: 'local', NODE_NO_WARNINGS: '1' },
  },
});
