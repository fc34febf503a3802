import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // DynamoDB Local is started once per run and torn down even on failure.
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 180_000,
    pool: 'forks',
    env: { POWERTOOLS_LOG_LEVEL: 'SILENT', AWS_REGION: 'local', NODE_NO_WARNINGS: '1' },
  },
});
