/**
 * The layer rules of eslint.config.js bite (docs/architecture.md#layers): the repository's own
 * configuration, run on one import at a time as if it were in a given file. Type-aware rules are
 * off here: only the import rules are under test, and they need no type information.
 */
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../lib/constructs/service-function';

const eslint = new ESLint({ cwd: PROJECT_ROOT, overrideConfig: tseslint.configs.disableTypeChecked as never });

/** The import-rule messages `source` gets as the only import of `file`. */
async function importProblems(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(`import '${source}';\n`, { filePath: `${PROJECT_ROOT}${file}` });
  return (result?.messages ?? [])
    .filter((m) => m.ruleId === 'no-restricted-imports' || m.ruleId === '@typescript-eslint/no-restricted-imports')
    .map((m) => m.message);
}

const LAYER = 'must not import a layer above it or beside it';
const RELATIVE = 'Import lambdas/ as #lambdas/…';

describe('inside lambdas/, an import of a higher or sibling layer fails by any path', () => {
  it.each([
    ['lambdas/domain/backoff.ts', '../store/client'],
    ['lambdas/domain/backoff.ts', '../store/sub/deeper'],
    ['lambdas/domain/backoff.ts', '../../lambdas/store/client'],
    ['lambdas/domain/backoff.ts', '../domain/../store/client'],
    ['lambdas/domain/backoff.ts', '#lambdas/operations/admin'],
    ['lambdas/domain/backoff.ts', '../operations'],
    ['lambdas/store/client.ts', '../queue/job-queue'],
    ['lambdas/http/responses.ts', '../mcp/gate'],
    ['lambdas/contract/limits.ts', '../generated/contract'],
    ['lambdas/generated/contract.ts', '../domain/ids'],
    ['lambdas/composition/runtime.ts', '../functions/mcp'],
  ])('%s: %s', async (file, source) => {
    expect(await importProblems(file, source)).toEqual([expect.stringContaining(LAYER)]);
  });

  it.each([
    ['lambdas/domain/backoff.ts', '../contract/operations'],
    ['lambdas/domain/configured-event-types.ts', '../generated/event-catalogue'],
    ['lambdas/http/rest-handler.ts', '../generated/contract'],
    ['lambdas/store/client.ts', '../domain/ids'],
    ['lambdas/functions/mcp.ts', '../composition/runtime'],
    ['lambdas/pipeline/dispatcher.ts', './http-sender'],
  ])('%s may import %s', async (file, source) => {
    expect(await importProblems(file, source)).toEqual([]);
  });

  it('runtime code never imports the CDK app', async () => {
    expect(await importProblems('lambdas/domain/backoff.ts', '../../lib/config')).toEqual([
      expect.stringContaining('never imports the CDK app'),
    ]);
  });
});

describe('lib/ reaches the runtime only through the contract', () => {
  it.each([
    ['lib/config.ts', '#lambdas/mcp/gate'],
    ['lib/config.ts', '#lambdas/domain/recovery'],
    ['lib/constructs/delivery-pipeline.ts', '#lambdas/queue/delivery-queue'],
    ['lib/config.ts', '#lambdas/store/table-schema'],
    ['lib/docs/openapi-document.ts', '#lambdas/domain/recovery'],
  ])('%s: %s fails', async (file, source) => {
    expect(await importProblems(file, source)).toEqual([expect.stringContaining('imports the runtime only through #lambdas/contract/*')]);
  });

  it.each([
    ['lib/config.ts', '../lambdas/contract/deployment'],
    ['lib/constructs/table.ts', '../../lambdas/store/table-schema'],
  ])('%s: the relative %s fails', async (file, source) => {
    expect(await importProblems(file, source)).toEqual([expect.stringContaining(RELATIVE)]);
  });

  it.each([
    ['lib/config.ts', '#lambdas/contract/deployment'],
    ['lib/generate/contract-code.ts', '#lambdas/generated/contract'],
    ['lib/constructs/table.ts', '#lambdas/store/table-schema'],
    ['lib/constructs/schedules.ts', '#lambdas/domain/scheduled-jobs'],
    ['lib/docs/openapi-document.ts', '#lambdas/domain/backoff'],
    ['lib/generate/contract-code.ts', '#lambdas/domain/event-catalogue'],
  ])('%s may import %s', async (file, source) => {
    expect(await importProblems(file, source)).toEqual([]);
  });
});

describe('bin/ reaches the runtime through the contract and the composition layer; bin/local also through the Lambda entries', () => {
  it.each([
    ['bin/admin.ts', '#lambdas/store/client'],
    ['bin/admin.ts', '#lambdas/functions/mcp'],
    ['bin/local.ts', '#lambdas/queue/delivery-queue'],
    ['bin/local/stack.ts', '#lambdas/pipeline/publisher'],
    ['bin/local/http-front.ts', '#lambdas/http/responses'],
    ['bin/local/http-front.ts', '#lambdas/store/table-schema'],
  ])('%s: %s fails', async (file, source) => {
    expect(await importProblems(file, source)).toEqual([expect.stringContaining('imports the runtime only through #lambdas/contract/*')]);
  });

  it('says why bin/local may load the Lambda entries', async () => {
    expect(await importProblems('bin/local/http-front.ts', '#lambdas/pipeline/publisher')).toEqual([
      expect.stringContaining('#lambdas/functions/*: the local stack runs the real handlers, so it loads the Lambda entries'),
    ]);
  });

  it('the admin CLI may not import the local stack', async () => {
    expect(await importProblems('bin/admin.ts', './local/stack')).toEqual([
      expect.stringContaining('The admin CLI must not import the local stack.'),
    ]);
  });

  it('a relative path into lambdas/ fails', async () => {
    expect(await importProblems('bin/local/stack.ts', '../../lambdas/functions/mcp')).toEqual([expect.stringContaining(RELATIVE)]);
  });

  it.each([
    ['bin/admin.ts', '#lambdas/composition/tools'],
    ['bin/smoke/run-smoke.ts', '#lambdas/contract/schemas'],
    ['bin/local/stack.ts', '#lambdas/functions/mcp'],
    ['bin/local/stack.ts', '#lambdas/domain/scheduled-jobs'],
    ['bin/local/create-table.ts', '#lambdas/store/table-schema'],
    ['bin/local/in-process-queue.ts', '#lambdas/contract/deployment'],
  ])('%s may import %s', async (file, source) => {
    expect(await importProblems(file, source)).toEqual([]);
  });
});

describe('the bench imports any runtime module, by its subpath only', () => {
  it('the subpath passes, a relative path fails', async () => {
    expect(await importProblems('bench/pipeline.ts', '#lambdas/store/deliveries')).toEqual([]);
    expect(await importProblems('bench/pipeline.ts', '../lambdas/store/deliveries')).toEqual([expect.stringContaining(RELATIVE)]);
    // bench/lambdas.ts is the bench's own module.
    expect(await importProblems('bench/run.ts', './lambdas')).toEqual([]);
  });
});

describe('the console imports no server code by the subpath either', () => {
  it('a runtime module fails, a published number passes', async () => {
    expect(await importProblems('console/src/main.tsx', '#lambdas/store/client')).toEqual([
      expect.stringContaining('The console runs in the browser: no server code.'),
    ]);
    expect(await importProblems('console/src/main.tsx', '#lambdas/contract/limits')).toEqual([]);
  });
});
