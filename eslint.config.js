// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

/**
 * The layers of lambdas/, lowest first (docs/architecture.md#layers): a module
 * may import its own layer and the layers before it, never one after it; the
 * layers of one rank (store, queue and identity; http, mcp and pipeline) do not import each other.
 * `generated` is the contract compiled by `npm run generate` (routes and input schemas as data,
 * the MCP tools, the event catalogue's validators): it ranks right above the contract, imports
 * only the contract, and every layer above it may import it. Its event catalogue is ajv's
 * standalone code and so not linted; it also takes two types of domain/event-catalogue-core.ts.
 */
const LAYERS = [
  ['contract'],
  ['generated'],
  ['domain'],
  ['store', 'queue', 'identity'],
  ['operations'],
  ['http', 'mcp', 'pipeline'],
  ['composition'],
  ['functions'],
];

/**
 * An import that reaches the folder `lambdas/<one of layers>/` by any path: `#lambdas/<layer>/…`,
 * or a relative path whose step into `<layer>` comes after `..` or `lambdas` (`../store/x`,
 * `../store/sub/x`, `../../lambdas/store/x`, `../domain/../store/x`).
 */
const reaching = (layers) => `(^|/)(\\.\\.|#?lambdas)(/\\.)*/(${layers.join('|')})(/|$)`;

/** One ESLint zone per layer: imports of any higher (or same-rank sibling) layer fail lint. */
const layerZones = LAYERS.flatMap((rank, i) =>
  rank.map((layer) => {
    const forbidden = [...LAYERS.slice(i + 1).flat(), ...rank.filter((l) => l !== layer)];
    return {
      files: [`lambdas/${layer}/**/*.ts`],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: [
              ...(forbidden.length
                ? [
                    {
                      regex: reaching(forbidden),
                      message: `lambdas/${layer} must not import a layer above it or beside it (docs/architecture.md#layers).`,
                    },
                  ]
                : []),
              {
                group: ['**/bin/**', '**/lib/**', '**/test/**', '**/bench/**'],
                message: 'Runtime code never imports the CDK app, the local stack, tests or the bench.',
              },
            ],
          },
        ],
      },
    };
  }),
);

/** Outside lambdas/, the runtime is imported by its package.json subpath, so the rules below see which layer an import reaches. */
const NO_RELATIVE_RUNTIME = {
  regex: '^(\\.{1,2}/)*\\.\\./(.*/)?lambdas(/|$)',
  message: 'Import lambdas/ as #lambdas/… (package.json "imports"), never by a relative path (docs/architecture.md#layers).',
};

/**
 * What lib/ and bin/ may import of the runtime (docs/architecture.md#layers): the contract (its
 * deployment.ts names everything the stack, the local stack and the functions share) and the code
 * generated from it. `allowed` adds folders (`composition/`) or single modules (`store/table-schema`);
 * `who` names the files and `because`, when given, says why they need more, in the lint message.
 */
function runtimeZone(files, allowed, who, because) {
  const entries = ['contract/', 'generated/', ...allowed];
  const lookahead = entries.map((e) => (e.endsWith('/') ? e : `${e}$`)).join('|');
  return {
    files,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            NO_RELATIVE_RUNTIME,
            {
              regex: `^#lambdas/(?!${lookahead})`,
              message: `${who} imports the runtime only through #lambdas/contract/* (deployment.ts: what the stack, the local stack and the functions share) and #lambdas/generated/*${allowed.length ? `, and ${allowed.map((a) => `#lambdas/${a}${a.endsWith('/') ? '*' : ''}`).join(', ')}` : ''}${because ? `: ${because}` : ''} (docs/architecture.md#layers).`,
            },
            // The admin CLI targets deployed tables too: it must not depend on the local stack.
            ...(files.some((f) => f.startsWith('bin/admin'))
              ? [{ group: ['./local/*', '**/bin/local/**'], message: 'The admin CLI must not import the local stack.' }]
              : []),
          ],
        },
      ],
    },
  };
}

/**
 * Pure data modules the CDK app and the local stack deploy from, named one by one: the table's key
 * schema (the table CDK and bin/local create is the one the store reads) and the scheduled jobs
 * (the schedules CDK and bin/local run are the ones the functions implement).
 */
const TABLE_SCHEMA = 'store/table-schema';
const TABLE_SCHEMA_WHY = 'the table is created from the key schema the store reads';
const SCHEDULED_JOBS = 'domain/scheduled-jobs';
const SCHEDULED_JOBS_WHY = 'the schedules run the jobs as the functions define them';
/** The docs and the generator state and compile the runtime's rules: the retry ladder, signing, the event catalogue. */
const DOCS_RULES = ['domain/backoff', 'domain/signing', 'domain/configured-event-types'];
const GENERATOR_RULES = ['domain/event-catalogue'];
/**
 * bin/ reaches the runtime through the composition layer (composition/tools.ts is the runtime's face
 * for programs outside Lambda); bin/local also loads the Lambda entries, since it runs the real handlers.
 */
const BIN = ['composition/'];
const BIN_LOCAL = [...BIN, 'functions/'];
const BIN_LOCAL_WHY = 'the local stack runs the real handlers, so it loads the Lambda entries';

/**
 * One zone per set of files: ESLint applies the last matching zone's options whole, so a narrower
 * zone repeats its wider zone's allowances.
 */
const runtimeZones = [
  runtimeZone(['lib/**/*.ts'], [], 'lib/ (the CDK app)'),
  runtimeZone(['lib/constructs/table.ts'], [TABLE_SCHEMA], 'lib/ (the CDK app)', TABLE_SCHEMA_WHY),
  runtimeZone(['lib/constructs/schedules.ts'], [SCHEDULED_JOBS], 'lib/ (the CDK app)', SCHEDULED_JOBS_WHY),
  runtimeZone(
    ['lib/docs/**/*.ts'],
    DOCS_RULES,
    'lib/docs (the API reference)',
    'the reference states the retry ladder, signing and event types',
  ),
  runtimeZone(
    ['lib/generate/**/*.ts'],
    GENERATOR_RULES,
    'lib/generate (the contract generator)',
    'it checks the event types file as the runtime does',
  ),
  runtimeZone(
    ['bin/**/*.ts'],
    BIN,
    'bin/ (the local stack and the CLIs)',
    'composition/tools.ts is the runtime for programs outside Lambda',
  ),
  runtimeZone(
    ['bin/admin.ts', 'bin/admin/**/*.ts'],
    BIN,
    'The admin CLI',
    'composition/tools.ts is the runtime for programs outside Lambda',
  ),
  runtimeZone(['bin/local/**/*.ts'], BIN_LOCAL, 'bin/local (the local stack)', BIN_LOCAL_WHY),
  runtimeZone(
    ['bin/local/create-table.ts'],
    [...BIN_LOCAL, TABLE_SCHEMA],
    'bin/local (the local stack)',
    `${BIN_LOCAL_WHY}; ${TABLE_SCHEMA_WHY}`,
  ),
  runtimeZone(
    ['bin/local/stack.ts'],
    [...BIN_LOCAL, SCHEDULED_JOBS],
    'bin/local (the local stack)',
    `${BIN_LOCAL_WHY}; ${SCHEDULED_JOBS_WHY}`,
  ),
  {
    // The bench measures the runtime from inside: any module, by its subpath.
    files: ['bench/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [NO_RELATIVE_RUNTIME] }] },
  },
];

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', '.local/', 'coverage/', 'lambdas/mcp/reference-assets/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests read JSON responses as `any` on purpose: the assertions are the type check.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  ...layerZones,
  ...runtimeZones,
  {
    // The console is built for the browser: it shares the contract's types, never its code
    // (zod would triple the bundle), and nothing of the server side (docs/architecture.md#console).
    files: ['console/**/*.ts', 'console/**/*.tsx'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            // Except the published numbers (limits.ts), the permissions and scope bundles (permissions.ts) and staff
            // sign-in's setting and page tag (console-oidc.ts): they import nothing, so the console states them from their
            // one home without pulling server code or zod into the bundle.
            {
              group: [
                '**/lambdas/contract/*',
                '!**/lambdas/contract/limits',
                '!**/lambdas/contract/permissions',
                '!**/lambdas/contract/console-oidc',
              ],
              allowTypeImports: true,
              message:
                'The console imports only types from the contract (values only from limits.ts, permissions.ts and console-oidc.ts, which import nothing).',
            },
            {
              group: ['**/lambdas/*/**', '!**/lambdas/contract/*', '**/bin/**', '**/lib/**', '**/test/**', '**/bench/**', 'node:*'],
              message: 'The console runs in the browser: no server code.',
            },
            // The same two rules for the subpath form, which the globs above do not see.
            {
              regex: '^#lambdas/contract/(?!(limits|permissions|console-oidc)$)',
              allowTypeImports: true,
              message:
                'The console imports only types from the contract (values only from limits.ts, permissions.ts and console-oidc.ts, which import nothing).',
            },
            { regex: '^#lambdas/(?!contract/)', message: 'The console runs in the browser: no server code.' },
            { group: ['zod'], allowTypeImports: true, message: 'The console uses zod types only.' },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  // Layout is Prettier's (`npm run lint` runs `prettier --check`): no ESLint rule argues with it.
  prettier,
);
