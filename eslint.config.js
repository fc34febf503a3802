// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

/**
 * The layers of lambdas/, lowest first (docs/architecture.md#layers): a module
 * may import its own layer and the layers before it, never one after it; the
 * layers of one rank (store and queue; http, mcp and pipeline) do not import each other.
 */
const LAYERS = [['contract'], ['domain'], ['store', 'queue'], ['operations'], ['http', 'mcp', 'pipeline'], ['composition'], ['functions']];

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
                      group: forbidden.map((l) => `../${l}/*`),
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
  {
    // The admin CLI targets deployed tables too: it must not depend on the local stack.
    files: ['bin/admin.ts', 'bin/admin/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['./local/*', '**/bin/local/**'], message: 'The admin CLI must not import the local stack.' }] },
      ],
    },
  },
  {
    // The console is built for the browser: it shares the contract's types, never its code
    // (zod would triple the bundle), and nothing of the server side (docs/architecture.md#console).
    files: ['console/**/*.ts', 'console/**/*.tsx'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            // Except the published numbers (limits.ts imports nothing), so the console states them from their one home.
            {
              group: ['**/lambdas/contract/*', '!**/lambdas/contract/limits'],
              allowTypeImports: true,
              message: 'The console imports only types from the contract (values only from limits.ts).',
            },
            {
              group: ['**/lambdas/*/**', '!**/lambdas/contract/*', '**/bin/**', '**/lib/**', '**/test/**', '**/bench/**', 'node:*'],
              message: 'The console runs in the browser: no server code.',
            },
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
