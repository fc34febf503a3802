/**
 * `/console` and `/console/{asset}` (docs/architecture.md#console): the web console, built at
 * synth into content-hashed files. The page is public (it holds no data); everything it shows
 * comes from the REST API with the user's token. Only the origins of the stage's
 * `consoleFrameAncestors` may frame it (docs/behaviour.md#the-embedded-console). With the stage's
 * `consoleOidc`, the page names the identity provider staff sign in with, and may fetch from its
 * token endpoint (docs/behaviour.md#staff-sign-in).
 */
import type { APIGatewayProxyResult } from 'aws-lambda';
import { CONSOLE_OIDC_META_NAME, parseConsoleOidc, type ConsoleOidcTag } from '../contract/console-oidc';
import { CONSOLE_INDEX } from '../contract/deployment';
import type { ProviderDiscovery } from '../identity/oidc-discovery';
import { framedPageHeaders, PAGE_CSP, PAGE_SECURITY_HEADERS } from './page-security';

/** The console's Content-Security-Policy when no origin may frame it: the pages' one policy. */
export const CONSOLE_CSP = PAGE_CSP;

const ASSET = /^\/console\/(console-[A-Za-z0-9]+\.(js|css))$/;
const TYPES = { js: 'application/javascript; charset=utf-8', css: 'text/css; charset=utf-8' } as const;

/** Reads a file of the console bundle; undefined when absent. */
export type ConsoleFileReader = (name: string) => Buffer | undefined;

const securityHeaders = PAGE_SECURITY_HEADERS;

/** The `name` of the page's meta tag that tells the console how to sign staff in. */

/**
 * The staff sign-in the page offers: from the stage's `consoleOidc` (`rawSetting`, the
 * `CONSOLE_OIDC` JSON), the console's address (`CONSOLE_URL`) and the provider's discovered
 * endpoints. Null, and the page offers token sign-in only, when the setting is absent; also when
 * it is unusable or discovery fails, which is logged (`onError`) since staff then cannot sign in.
 * `discoveryOf` gives the (cached) discovery of an issuer.
 */
export async function staffSignInMeta(
  rawSetting: string | undefined,
  consoleUrl: string | undefined,
  discoveryOf: (issuer: string) => ProviderDiscovery,
  onError: (message: string, error?: unknown) => void,
): Promise<ConsoleOidcTag | null> {
  if (rawSetting === undefined || rawSetting === '') return null;
  const problems: string[] = [];
  let raw: unknown;
  try {
    raw = JSON.parse(rawSetting);
  } catch {
    problems.push('consoleOidc is not JSON');
  }
  // Loopback issuers are the local stack's; a deployed stage's setting was checked at synth (https only).
  const settings = problems.length === 0 ? parseConsoleOidc(raw, problems, true) : null;
  if (!settings || !consoleUrl) {
    onError(`Staff sign-in is off: ${[...problems, ...(consoleUrl ? [] : ['CONSOLE_URL is not set'])].join('; ')}`);
    return null;
  }
  try {
    const provider = await discoveryOf(settings.issuer)();
    return {
      name: settings.name,
      issuer: settings.issuer,
      clientId: settings.clientId,
      scopes: settings.scopes,
      authorizationEndpoint: provider.authorizationEndpoint,
      tokenEndpoint: provider.tokenEndpoint,
      redirectUri: consoleUrl,
    };
  } catch (error) {
    onError(`Staff sign-in is off for this page: the provider's discovery at ${settings.issuer} failed`, error);
    return null;
  }
}

/** `value` safe inside a double-quoted HTML attribute. */
function attributeEscaped(value: string): string {
  return value.replace(/[&"'<>]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The page with the meta tag naming the provider: last in its head (after the charset's), or, in a
 * page with no written head, right after the doctype, where the parser puts it in the implied head.
 */
function withStaffSignIn(html: string, meta: ConsoleOidcTag): string {
  const tag = `<meta name="${CONSOLE_OIDC_META_NAME}" content="${attributeEscaped(JSON.stringify(meta))}">`;
  if (/<\/head>/i.test(html)) return html.replace(/<\/head>/i, () => `${tag}</head>`);
  const doctype = /^\s*<!doctype[^>]*>/i.exec(html)?.[0] ?? '';
  return `${doctype}${tag}${html.slice(doctype.length)}`;
}

/** True for a path {@link consoleResponse} answers with the page (not an asset). */
export function isConsolePage(path: string): boolean {
  return path === '/console' || path === '/console/';
}

/**
 * Serves a console path, or null when the path is not one. The page is never cached (it names
 * the current assets); hashed assets are cached for a year, since a new build has new names.
 * `frameAncestors` are the origins that may frame the page (none by default). With `staffSignIn`,
 * the page carries it in `<meta name="console-oidc">` and may fetch from the token endpoint's origin.
 */
export function consoleResponse(
  path: string,
  read: ConsoleFileReader,
  frameAncestors: readonly string[] = [],
  staffSignIn: ConsoleOidcTag | null = null,
): APIGatewayProxyResult | null {
  if (isConsolePage(path)) {
    const page = read(CONSOLE_INDEX);
    if (!page) return null;
    // The page links its assets as `console/<file>`, relative to `/console`; from `/console/` they are siblings.
    const html = path.endsWith('/') ? page.toString('utf8').replaceAll('"console/', '"') : page.toString('utf8');
    return {
      statusCode: 200,
      headers: {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-cache',
        ...framedPageHeaders(frameAncestors, staffSignIn ? [new URL(staffSignIn.tokenEndpoint).origin] : []),
      },
      body: staffSignIn ? withStaffSignIn(html, staffSignIn) : html,
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
