// @ts-check
/**
 * Mutation testing (`npm run mutate`, not part of `npm test`; CONTRIBUTING.md): Stryker changes the
 * pure rules one small edit at a time (a `>=` to `>`, a `||` to `&&`, a string emptied) and runs the
 * unit tests of vitest.mutate.config.ts against each change; a change no test notices ("survived")
 * is behaviour nothing pins. The mutated set is the domain layer and the contract's permission and
 * pagination rules. Reports land in reports/mutation/ (gitignored); the incremental file there
 * (reports/stryker-incremental.json) makes a rerun retest only what changed.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: 'vitest.mutate.config.ts' },
  coverageAnalysis: 'perTest',
  mutate: ['lambdas/domain/**/*.ts', 'lambdas/contract/permissions.ts', 'lambdas/contract/pagination.ts'],
  // Two runners: the machines this runs on have two cores.
  concurrency: 2,
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 95, low: 90, break: null },
  timeoutMS: 10_000,
  tempDirName: '.stryker-tmp',
  // The sandbox needs the code and the tests, not the build outputs or the console's screenshots.
  ignorePatterns: ['cdk.out', '.local', 'coverage', 'docs/images', 'reports'],
};
