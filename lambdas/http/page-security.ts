/**
 * The security headers of the pages this API serves itself (the console and the reference,
 * docs/architecture.md#console): one policy, so the two pages cannot drift apart. Only the
 * console may be framed, and only by the stage's `consoleFrameAncestors`
 * (docs/behaviour.md#the-embedded-console).
 */

/**
 * Content-Security-Policy: only this origin, no inline script or style, no plugins, no
 * third-party host but the `connectOrigins` a page may fetch from (the console's identity
 * provider's token endpoint, docs/behaviour.md#staff-sign-in); framed only by `frameAncestors`
 * (`'none'` when there are none). `img-src
 * data:` is for favicons and icons inlined in stylesheets; style props set through the CSSOM
 * (Preact's, Swagger UI's) are not governed by `style-src`.
 */
function pageCsp(frameAncestors: readonly string[] = [], connectOrigins: readonly string[] = []): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    ["connect-src 'self'", ...connectOrigins].join(' '),
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${frameAncestors.length > 0 ? frameAncestors.join(' ') : "'none'"}`,
  ].join('; ');
}

/** The policy of a page nobody may frame (the reference, and the console of a stage that lists no origin). */
export const PAGE_CSP = pageCsp();

/** Headers every page response and asset carries besides its type, caching and CSP. */
export const PAGE_SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
} as const;

/**
 * The headers of a page that `frameAncestors` may frame and that may fetch from `connectOrigins`
 * besides its own. `X-Frame-Options` cannot name an origin (its ALLOW-FROM is gone from browsers)
 * and a browser that sees DENY refuses every frame, so it is left out when origins are listed: the
 * CSP's `frame-ancestors` says who may frame the page.
 */
export function framedPageHeaders(frameAncestors: readonly string[], connectOrigins: readonly string[] = []): Record<string, string> {
  const { 'x-frame-options': deny, ...rest } = PAGE_SECURITY_HEADERS;
  return {
    'content-security-policy': pageCsp(frameAncestors, connectOrigins),
    ...rest,
    ...(frameAncestors.length > 0 ? {} : { 'x-frame-options': deny }),
  };
}
