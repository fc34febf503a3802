/**
 * `/openapi.json` and `/reference` (docs/architecture.md#reference-documents): the document generated at synth
 * and an interactive reference page whose assets are self-hosted.
 */
import type { APIGatewayProxyResult } from 'aws-lambda';
import { PAGE_CSP, PAGE_SECURITY_HEADERS } from './page-security';

/** Files of the reference UI served under `/reference/`. */
export const REFERENCE_ASSETS = {
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'reference-theme.css': 'text/css; charset=utf-8',
  'reference-init.js': 'application/javascript; charset=utf-8',
} as const;

/** The Content-Security-Policy of `/reference`, its assets and `/openapi.json`: the pages' one policy (Swagger UI needs nothing looser). */
export const REFERENCE_CSP = PAGE_CSP;

/** Headers of every docs response besides its type and caching. */
const SECURITY_HEADERS = { 'content-security-policy': REFERENCE_CSP, ...PAGE_SECURITY_HEADERS } as const;

/**
 * The reference page: Swagger UI rendering `/openapi.json`, all assets from this host. Our theme
 * comes after Swagger UI's stylesheet so that its colours win; `reference-init.js` starts it.
 */
const REFERENCE_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Webhook delivery service: API reference</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="reference/swagger-ui.css">
  <link rel="stylesheet" href="reference/reference-theme.css">
</head>
<body>
  <div id="reference"></div>
  <script src="reference/swagger-ui-bundle.js"></script>
  <script src="reference/reference-init.js"></script>
</body>
</html>
`;

/** Reads a file of the docs bundle; undefined when absent. */
export type DocsFileReader = (name: string) => Buffer | undefined;

/**
 * The document with `servers` set to where it was fetched from, so clients and
 * "try it out" call the right base URL (a stage prefix included).
 */
export function withServer(document: Buffer, serverUrl: string | undefined): string {
  if (!serverUrl) return document.toString('utf8');
  const doc = JSON.parse(document.toString('utf8')) as Record<string, unknown>;
  return JSON.stringify({ ...doc, servers: [{ url: serverUrl }] });
}

/** The base URL of the API a request came through, when the request tells it. */
export function serverUrlOf(event: {
  headers?: Record<string, string | undefined> | null;
  requestContext?: { domainName?: string; stage?: string };
}): string | undefined {
  const ctx = event.requestContext;
  if (ctx?.domainName && ctx.stage && ctx.stage !== '$default') {
    // A custom domain maps the stage away; only the default execute-api host carries it in the path.
    return /\.execute-api\./.test(ctx.domainName) ? `https://${ctx.domainName}/${ctx.stage}` : `https://${ctx.domainName}`;
  }
  const host = Object.entries(event.headers ?? {}).find(([k]) => k.toLowerCase() === 'host')?.[1];
  return host ? `http://${host}` : undefined;
}

/** Serves a docs path from the bundle, or null when the path is not a docs path. */
export function docsResponse(path: string, read: DocsFileReader, serverUrl?: string): APIGatewayProxyResult | null {
  const headers = (type: string, cache: string) => ({ 'content-type': type, 'cache-control': cache, ...SECURITY_HEADERS });
  if (path === '/openapi.json') {
    const doc = read('openapi.json');
    return doc ? { statusCode: 200, headers: headers('application/json', 'public, max-age=60'), body: withServer(doc, serverUrl) } : null;
  }
  if (path === '/reference' || path === '/reference/') {
    return {
      statusCode: 200,
      headers: headers('text/html; charset=utf-8', 'public, max-age=60'),
      body: REFERENCE_HTML.replaceAll('"reference/', path.endsWith('/') ? '"' : '"reference/'),
    };
  }
  const asset = /^\/reference\/([a-z0-9.-]+)$/.exec(path)?.[1];
  if (asset && asset in REFERENCE_ASSETS) {
    const body = read(asset);
    if (body)
      return {
        statusCode: 200,
        headers: headers(REFERENCE_ASSETS[asset as keyof typeof REFERENCE_ASSETS], 'public, max-age=3600'),
        body: body.toString('utf8'),
      };
  }
  return null;
}
