/**
 * `/console` and `/console/{asset}` (docs/architecture.md#console): the web console, built at
 * synth into content-hashed files. The page is public (it holds no data); everything it shows
 * comes from the REST API with the user's token. Only the origins of the stage's
 * `consoleFrameAncestors` may frame it (docs/behaviour.md#the-embedded-console).
 */
import type { APIGatewayProxyResult } from 'aws-lambda';
import { CONSOLE_INDEX } from '../contract/deployment';
import { framedPageHeaders, PAGE_CSP, PAGE_SECURITY_HEADERS } from './page-security';

/** The console's Content-Security-Policy when no origin may frame it: the pages' one policy. */
export const CONSOLE_CSP = PAGE_CSP;

const ASSET = /^\/console\/(console-[A-Za-z0-9]+\.(js|css))$/;
const TYPES = { js: 'application/javascript; charset=utf-8', css: 'text/css; charset=utf-8' } as const;

/** Reads a file of the console bundle; undefined when absent. */
export type ConsoleFileReader = (name: string) => Buffer | undefined;

const securityHeaders = PAGE_SECURITY_HEADERS;

/**
 * Serves a console path, or null when the path is not one. The page is never cached (it names
 * the current assets); hashed assets are cached for a year, since a new build has new names.
 * `frameAncestors` are the origins that may frame the page (none by default).
 */
export function consoleResponse(
  path: string,
  read: ConsoleFileReader,
  frameAncestors: readonly string[] = [],
): APIGatewayProxyResult | null {
  if (path === '/console' || path === '/console/') {
    const page = read(CONSOLE_INDEX);
    if (!page) return null;
    // The page links its assets as `console/<file>`, relative to `/console`; from `/console/` they are siblings.
    const html = path.endsWith('/') ? page.toString('utf8').replaceAll('"console/', '"') : page.toString('utf8');
    return {
      statusCode: 200,
      headers: {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-cache',
        ...framedPageHeaders(frameAncestors),
      },
      body: html,
    };
  }
  const match = ASSET.exec(path);
  if (!match?.[1]) return null;
  const body = read(match[1]);
  if (!body) return null;
  return {
    statusCode: 200,
    headers: {
      'content-type': TYPES[match[2] as keyof typeof TYPES],
      'cache-control': 'public, max-age=31536000, immutable',
      ...securityHeaders,
    },
    body: body.toString('utf8'),
  };
}
