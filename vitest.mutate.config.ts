import { defineConfig } from 'vitest/config';

/**
 * The tests `npm run mutate` (stryker.config.js) runs against each mutant: the pure unit tests of
 * the mutated rules only, with no DynamoDB Local, no global setup and no network, so a mutant takes
 * well under a second. The DynamoDB-backed tests still run in `npm test`.
 */
export default defineConfig({
  test: {
    include: ['test/domain/**/*.test.ts', 'test/contract/**/*.unit.test.ts', 'test/**/*.unit.test.ts'],
    setupFiles: ['test/domain/mutate-setup.ts'],
    // Instrumented code runs slower than in `npm test`.
    testTimeout: 20_000,
    pool: 'forks',
    env: { POWERTOOLS_LOG_LEVEL: 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true', AWS_REGION: 'local', NODE_NO_WARNINGS: '1' },
  },
});
