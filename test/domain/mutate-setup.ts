/**
 * Setup of the mutation runs only (vitest.mutate.config.ts): fewer fast-check runs per property, so
 * each of the thousands of mutant runs stays short. The examples pin the rules; a property here
 * still catches a mutant that breaks it for most inputs. `npm test` keeps fast-check's default.
 */
import fc from 'fast-check';

fc.configureGlobal({ numRuns: 20 });
