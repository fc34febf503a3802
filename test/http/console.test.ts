/**
 * Serving the web console (lambdas/http/console.ts): which paths are console files, the page's
 * Content-Security-Policy and caching, the hashed assets' year-long cache; then the same
 * through the real local stack, as a browser loads the page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_INDEX } from '../../lambdas/contract/deployment';
import { frameAncestorsFrom, isFrameAncestorOrigin } from '../../lambdas/contract/frame-ancestors';
import { CONSOLE_CSP, consoleResponse, type ConsoleFileReader } from '../../lambdas/http/console';
import { REFERENCE_CSP } from '../../lambdas/http/docs';
import { startTestApi, type TestApi } from '../helpers/local-api';

/** The policy, written out: a change to it is a decision this test makes visible. */
const EXPECTED_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const IMMUTABLE = 'public, max-age=31536000, immutable';

const SCRIPT = 'console-AB12CD34.js';
const STYLESHEET = 'console-EF56GH78.css';
const PAGE = `<!doctype html><link rel="stylesheet" href="console/${STYLESHEET}"><script type="module" src="console/${SCRIPT}"></script><div id="app"></div>`;

/** A console folder in memory; records the names it was asked for. */
function folder(files: Record<string, string> = { [CONSOLE_INDEX]: PAGE, [SCRIPT]: 'export {};', [STYLESHEET]: 'body{}' }) {
  const asked: string[] = [];
  const read: ConsoleFileReader = (name) => {
    asked.push(name);
    return name in files ? Buffer.from(files[name]!) : undefined;
  };
  return { read, asked };
}

describe('consoleResponse', () => {
  it('serves /console as an HTML page with the strict CSP, never cached', () => {
    const res = consoleResponse('/console', folder().read);
    expect(res?.statusCode).toBe(200);
    expect(res?.body).toBe(PAGE);
    expect(res?.headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-cache',
      'content-security-policy': EXPECTED_CSP,
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
    });
  });

  it("has a policy of this origin only: no inline or eval'd script, no framing, no other host", () => {
    expect(CONSOLE_CSP).toBe(EXPECTED_CSP);
    const directives = new Map(CONSOLE_CSP.split('; ').map((d) => [d.split(' ')[0]!, d.split(' ').slice(1)]));
    expect(directives.get('default-src')).toEqual(["'self'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('connect-src')).toEqual(["'self'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(CONSOLE_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
  });

  it('serves /console/ with the asset references rewritten as siblings', () => {
    const res = consoleResponse('/console/', folder().read);
    expect(res?.statusCode).toBe(200);
    expect(res?.headers?.['content-security-policy']).toBe(EXPECTED_CSP);
    expect(res?.body).toContain(`src="${SCRIPT}"`);
    expect(res?.body).toContain(`href="${STYLESHEET}"`);
    expect(res?.body).not.toContain('"console/');
  });

  it.each([
    [SCRIPT, 'application/javascript; charset=utf-8', 'export {};'],
    [STYLESHEET, 'text/css; charset=utf-8', 'body{}'],
  ])('serves the hashed /console/%s with its type and a year-long immutable cache', (file, type, body) => {
    const res = consoleResponse(`/console/${file}`, folder().read);
    expect(res?.statusCode).toBe(200);
    expect(res?.body).toBe(body);
    expect(res?.headers).toMatchObject({ 'content-type': type, 'cache-control': IMMUTABLE, 'x-content-type-options': 'nosniff' });
  });

  it.each([
    '/console/../x',
    '/console/..%2Fx',
    `/console/../console/${SCRIPT}`,
    `/console/./${SCRIPT}`,
    '/console/index.html',
    '/console/index.html?',
    '/console/foo.js',
    '/console/console-.js',
    `/console/${SCRIPT}.map`,
    `/console/${SCRIPT}/`,
    `/console/sub/${SCRIPT}`,
    '/console/console-AB12CD34.html',
    '/console//',
    '/consolex',
    '/console.js',
    '/',
    '',
  ])('answers %j with null (not a console file)', (path) => {
    const { read, asked } = folder();
    expect(consoleResponse(path, read)).toBeNull();
    // Nothing outside the bundle's own names is ever looked up.
    for (const name of asked) expect([CONSOLE_INDEX, SCRIPT, STYLESHEET]).toContain(name);
  });

  it('lets the listed origins frame the page, and only them: frame-ancestors names them and X-Frame-Options DENY is gone', () => {
    const ancestors = ['https://app.example.com', 'http://localhost:5173'];
    for (const path of ['/console', '/console/']) {
      const headers = consoleResponse(path, folder().read, ancestors)?.headers ?? {};
      expect(headers['content-security-policy'], path).toBe(
        EXPECTED_CSP.replace("frame-ancestors 'none'", 'frame-ancestors https://app.example.com http://localhost:5173'),
      );
      // A browser that sees DENY refuses every frame, whatever the CSP allows.
      expect(headers, path).not.toHaveProperty('x-frame-options');
      expect(headers, path).toMatchObject({ 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' });
    }
    // The reference stays unframeable whatever the console allows.
    expect(REFERENCE_CSP).toContain("frame-ancestors 'none'");
  });

  it("keeps frame-ancestors 'none' and X-Frame-Options DENY when no origin is listed", () => {
    const headers = consoleResponse('/console', folder().read, [])?.headers ?? {};
    expect(headers['content-security-policy']).toBe(EXPECTED_CSP);
    expect(headers['x-frame-options']).toBe('DENY');
  });

  it.each([
    ['https://app.example.com', true],
    ['https://app.example.com:8443', true],
    ['http://localhost:5173', true],
    ['http://127.0.0.1:4000', true],
    ['http://[::1]:4000', true],
    ['http://app.example.com', false],
    ['https://app.example.com/', false],
    ['https://app.example.com/settings', false],
    ['https://*.example.com', false],
    ['HTTPS://APP.EXAMPLE.COM', false],
    ['https://app.example.com:0', false],
    ['https://app.example.com:70000', false],
    ["'self'", false],
    ['*', false],
    ['https://a.example.com; script-src *', false],
    ['javascript:alert(1)', false],
  ])('takes %j as an origin that may frame the console: %s', (origin, ok) => {
    expect(isFrameAncestorOrigin(origin)).toBe(ok);
  });

  it('reads CONSOLE_FRAME_ANCESTORS as a JSON array of origins, and anything else as none', () => {
    expect(frameAncestorsFrom(undefined)).toEqual([]);
    expect(frameAncestorsFrom('')).toEqual([]);
    expect(frameAncestorsFrom('[]')).toEqual([]);
    expect(frameAncestorsFrom('["https://a.example","https://a.example","http://localhost:3001"]')).toEqual([
      'https://a.example',
      'http://localhost:3001',
    ]);
    // One word that is not an origin, or not a list at all: the console stays unframeable.
    expect(frameAncestorsFrom('["https://a.example","https://b.example; script-src *"]')).toEqual([]);
    expect(frameAncestorsFrom('https://a.example')).toEqual([]);
    expect(frameAncestorsFrom('{"a":1}')).toEqual([]);
  });

  it('answers null for a well-formed asset name the bundle does not have, and for /console with no page', () => {
    expect(consoleResponse('/console/console-ZZ99ZZ99.js', folder().read)).toBeNull();
    expect(consoleResponse('/console', folder({}).read)).toBeNull();
  });
});

describe('the console on the local stack', () => {
  let api: TestApi;
  let page: Response;
  let html: string;

  beforeAll(async () => {
    api = await startTestApi({ schedules: false });
    page = await fetch(`${api.apiUrl}/console`);
    html = await page.text();
  });
  afterAll(async () => {
    await api?.close();
  });

  /** The `src` of the page's script and the `href` of its stylesheet. */
  const assetRefs = () => ({
    script: /<script type="module" src="([^"]+)"><\/script>/.exec(html)?.[1],
    stylesheet: /<link rel="stylesheet" href="([^"]+)" ?\/?>/.exec(html)?.[1],
  });

  it('serves GET /console with no token: the page, its CSP, never cached', () => {
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(EXPECTED_CSP);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(html).toContain('<div id="app">');
  });

  it('loads the script and stylesheet the page references, with the immutable cache', async () => {
    const { script, stylesheet } = assetRefs();
    expect(script).toMatch(/^console\/console-[A-Z0-9]+\.js$/i);
    expect(stylesheet).toMatch(/^console\/console-[A-Z0-9]+\.css$/i);
    for (const [ref, type] of [
      [script!, 'application/javascript; charset=utf-8'],
      [stylesheet!, 'text/css; charset=utf-8'],
    ] as const) {
      // Resolved as the browser does, against the page's URL.
      const res = await fetch(new URL(ref, `${api.apiUrl}/console`));
      expect(res.status, ref).toBe(200);
      expect(res.headers.get('content-type'), ref).toBe(type);
      expect(res.headers.get('cache-control'), ref).toBe(IMMUTABLE);
      expect((await res.text()).length, ref).toBeGreaterThan(0);
    }
  });

  it('serves /console/ with references that resolve from there too', async () => {
    const res = await fetch(`${api.apiUrl}/console/`);
    expect(res.status).toBe(200);
    const body = await res.text();
    const script = /<script type="module" src="([^"]+)"><\/script>/.exec(body)?.[1];
    expect(new URL(script!, `${api.apiUrl}/console/`).href).toBe(new URL(assetRefs().script!, `${api.apiUrl}/console`).href);
  });

  it('names no third-party URL in the page: every src and href is the same origin (or the data: favicon)', () => {
    expect(html).not.toMatch(/https?:\/\//);
    const refs = [...html.matchAll(/\s(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThanOrEqual(2);
    const origin = new URL(api.apiUrl).origin;
    for (const ref of refs) {
      const url = new URL(ref, `${api.apiUrl}/console`);
      expect(url.protocol === 'data:' || url.origin === origin, ref).toBe(true);
    }
  });

  it('answers an unknown console file with a RouteNotFound problem', async () => {
    const res = await api.call('GET', '/console/console-NOPE1234.js', { token: null });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.body).toMatchObject({ tag: 'RouteNotFound' });
  });
});

describe('the console on a local stack whose consoleFrameAncestors list an origin', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startTestApi({ schedules: false, consoleFrameAncestors: ['http://localhost:5173'] });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('lets that origin frame /console, while /reference and /openapi.json stay unframeable', async () => {
    const page = await fetch(`${api.apiUrl}/console`);
    expect(page.headers.get('content-security-policy')).toContain('frame-ancestors http://localhost:5173');
    expect(page.headers.get('x-frame-options')).toBeNull();
    const reference = await fetch(`${api.apiUrl}/reference`);
    expect(reference.status).toBe(200);
    expect(reference.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(reference.headers.get('x-frame-options')).toBe('DENY');
    const openapi = await fetch(`${api.apiUrl}/openapi.json`);
    expect(openapi.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(openapi.headers.get('x-frame-options')).toBe('DENY');
  });
});
