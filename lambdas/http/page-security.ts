/**
 * The security headers of the pages this API serves itself (the console and the reference,
 * docs/architecture.md#console): one policy, so the two pages cannot drift apart.
 */

/**
 * Content-Security-Policy: only this origin, no inline script or style, no plugins, no framing,
 * no third-party host. `img-src data:` is for favicons and icons inlined in stylesheets; style
 * props set through the CSSOM (Preact's, Swagger UI's) are not governed by `style-src`.
 */
export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers every page response and asset carries besides its type, caching and CSP. */
export const PAGE_SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
} as const;
