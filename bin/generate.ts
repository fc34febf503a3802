/**
 * `npm run generate`: writes the code functions run instead of zod and ajv (lambdas/generated/),
 * from the contract and config/event-types.json (lib/generate/contract-code.ts).
 * `--check` only reports stale files (exit 1), as the freshness test does.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { renderGeneratedFiles, staleGeneratedFiles } from '../lib/generate/contract-code';

const root = join(import.meta.dirname, '..');
if (process.argv.includes('--check')) {
  const stale = staleGeneratedFiles(root);
  for (const path of stale) console.error(`stale: ${path}`);
  process.exit(stale.length ? 1 : 0);
}
for (const [path, text] of Object.entries(renderGeneratedFiles())) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
  console.log(`wrote ${path}`);
}
