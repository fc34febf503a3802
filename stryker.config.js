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
/**
 * Mutants no test can kill because the mutated code behaves exactly as the original (equivalent
 * mutants), with the reason. They stay in the run and count as survivors (each file's score stays
 * at 90 % or more with them); a new survivor not listed here is a rule no test pins.
 */
export const EQUIVALENT_MUTANTS = [
  {
    at: 'lambdas/domain/cursor.ts:15',
    mutant: "Buffer.from(…, 'utf8') → Buffer.from(…, '')",
    reason: 'an empty encoding name is utf8, the default',
  },
  {
    at: 'lambdas/domain/delivery-lanes.ts:54',
    mutant: 'durationMs === null → false',
    reason: 'null < slowAttemptMs is true (null compares as 0), so a null duration returns null either way',
  },
  {
    at: 'lambdas/domain/webhook-url.ts:97-99',
    mutant: 'the URL parser’s catch block emptied',
    reason: 'the parse failure then throws into checkWebhookUrl’s own catch, which returns the same refusal',
  },
  {
    at: 'lambdas/domain/webhook-url.ts:49-51, 63, 67-68, 80',
    mutant: 'checkWebhookUrl’s and isPublicAddress’s catch blocks, isPublicAddress’s string guard, isCanonicalAddress’s IPv6.isValid guard',
    reason:
      'the catches are reached only without a guard (check() refuses a non-string first; ipaddr.js parses what it validated); ' +
      'without a guard, the non-string or invalid IPv6 throws into a catch that returns the same false',
  },
  {
    at: 'lambdas/domain/webhook-url.ts:126, 130',
    mutant: 'the empty-host and invalid-bracketed-IPv6 refusals',
    reason: 'the URL parser refuses both for http(s) itself, so checkHost never sees them',
  },
  {
    at: 'lambdas/domain/webhook-url.ts:137',
    mutant: "bare === '' → false (or compared with another string)",
    reason: 'a host of dots only then fails the empty-label check below, with the same refusal',
  },
  {
    at: 'lambdas/domain/webhook-url.ts:183',
    mutant: "zoneId !== '' → true (or compared with another string)",
    reason: 'ipaddr.js never gives an empty zone id (it refuses "fe80::1%")',
  },
  {
    at: 'lambdas/domain/webhook-url.ts:197-209',
    mutant: 'the ipv4Mapped, ipv4Compatible or default case emptied',
    reason: 'each falls through to a case that computes the same: the last 32 bits, or undefined',
  },
  {
    at: 'lambdas/domain/webhook-url.ts:226',
    mutant: "split('.').pop() ?? '' → ?? 'Stryker was here!'",
    reason: 'split always returns at least one element, so pop never gives undefined',
  },
  {
    at: 'lambdas/domain/api-tokens.ts:14 and lambdas/domain/signing.ts:15',
    mutant: "hash.update(…, 'utf8') → hash.update(…, '')",
    reason: 'an empty encoding name is utf8, the default',
  },
  {
    at: 'lambdas/domain/api-tokens.ts:19',
    mutant: 'if (!header) return null → if (false) …',
    reason: "an empty, null or undefined header fails the Bearer pattern too ('null' and 'undefined' do not match it)",
  },
  {
    at: 'lambdas/domain/delivery-log.ts:57',
    mutant: 'filter.sinceMs !== null → true',
    reason: 'created < null compares with 0, false for every creation time since 1970 (a delivery id cannot be older)',
  },
  {
    at: 'lambdas/domain/subscription-plan.ts:56',
    mutant: 'to?.enabled ?? from?.enabled ?? false → ?? true',
    reason: 'the fallback is reached only when neither state exists, and then there is no write to copy the flag into',
  },
  {
    at: 'lambdas/domain/newest-first-merge.ts:52',
    mutant: 'a.position < b.position → <= in the newest-first comparator',
    reason: 'positions are distinct (an entry sits in one shard, once, and a stop is an entry’s position), so no two compare equal',
  },
];

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
