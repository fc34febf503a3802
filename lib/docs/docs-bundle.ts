/**
 * Build-time only (CDK synth, local stack): writes the docs bundle, the
 * generated OpenAPI document and the reference UI assets, into a folder.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deploymentCatalogue } from '#lambdas/domain/configured-event-types';
import { buildOpenApiDocument } from './openapi-document';
import { REFERENCE_INIT_JS } from './reference-init';

/**
 * Writes `openapi.json` and the reference assets into `dir`; returns the document. `loopbackHttp`:
 * the local stack's document, whose endpoint URLs may also be http to loopback hosts.
 */
export function writeDocsBundle(dir: string, options: { serverUrl?: string; loopbackHttp?: boolean } = {}): Record<string, unknown> {
  mkdirSync(dir, { recursive: true });
  const doc = buildOpenApiDocument({ eventTypes: deploymentCatalogue().types, ...options });
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc, null, 2));
  const swaggerDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  for (const file of ['swagger-ui-bundle.js', 'swagger-ui.css']) copyFileSync(join(swaggerDir, file), join(dir, file));
  copyFileSync(fileURLToPath(new URL('reference-theme.css', import.meta.url)), join(dir, 'reference-theme.css'));
  writeFileSync(join(dir, 'reference-init.js'), REFERENCE_INIT_JS);
  return doc as unknown as Record<string, unknown>;
}
