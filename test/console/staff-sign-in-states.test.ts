/**
 * The console's side of staff sign-in in Chromium, with the identity provider and the staff
 * routes stubbed in the browser (the real ones are in ./staff-journey.test.ts): the sign-in choice,
 * the authorization request and the code exchange (PKCE, state, the API's nonce), each refusal in
 * words, the workspace picker by keyboard, who is signed in, a read role's missing controls, a
 * staff sign-out, and a session that ends. Workspace data comes from the real local stack: the
 * stub staff token is swapped for the stack's admin token on its way to the API.
 */
import { createHash } from 'node:crypto';
import type { Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { hasChromium, launchChromium, NO_CHROMIUM_REASON, saveScreenshot, seriousAxeFindings, type TestBrowser } from '../helpers/browser';

const PROVIDER = 'https://sso.acme.test';
const STAFF_TOKEN = 'wss_stubStaffSessionTokenForTheBrowserTestsOnly1';
const SESSION_ID = 'wcs_01JD2YF7G8H9J0K1M2N3P4Q5RS';
/** Waits that span a round trip through the provider's page and a console page load, on a shared machine. */
const POLL = { timeout: 10_000 };

/** What the stubs saw. */
interface Seen {
  authorize: URL | null;
  tokenForm: URLSearchParams | null;
  idTokens: string[];
  revoked: string[];
}

interface StubOptions {
  role?: 'read' | 'write' | 'admin';
  /** The answer of POST /console-sessions: the session, or a problem. */
  session?: { status: number; body: Record<string, unknown> };
  /** What the provider answers the authorization request with (query of the redirect back). */
  providerAnswer?: (authorize: URL) => Record<string, string>;
  /** Seconds the session lasts. */
  ttlSeconds?: number;
  revokeStatus?: number;
  /** Answers GET /workspaces instead of the three stub workspaces. */
  workspaces?: (route: Route) => Promise<void>;
}

const json = (route: Route, status: number, body: unknown, headers: Record<string, string> = {}) =>
  route.fulfill({
    status,
    headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json', ...headers },
    body: JSON.stringify(body),
  });

/** Stubs the provider and the staff routes for `page`, and gives the console page its provider tag. */
async function stubStaff(page: Page, api: TestApi, options: StubOptions = {}): Promise<Seen> {
  const seen: Seen = { authorize: null, tokenForm: null, idTokens: [], revoked: [] };
  const redirectUri = `${api.apiUrl}/console/`;
  const tag = {
    name: 'Acme SSO',
    issuer: PROVIDER,
    clientId: 'webhooks-console',
    scopes: ['openid', 'email', 'profile'],
    authorizationEndpoint: `${PROVIDER}/authorize`,
    tokenEndpoint: `${PROVIDER}/token`,
    redirectUri,
  };
  const apiOrigin = new URL(api.apiUrl).origin;
  await page.route(
    (url) => url.origin === apiOrigin && (url.pathname === '/console' || url.pathname === '/console/'),
    async (route) => {
      // Playwright's fetch may reuse a connection the stack's server has just closed as idle: one more try.
      const response = await route.fetch().catch(() => route.fetch());
      const content = JSON.stringify(tag).replaceAll('&', '&amp;').replaceAll('"', '&quot;');
      const csp = (response.headers()['content-security-policy'] ?? '').replace("connect-src 'self'", `connect-src 'self' ${PROVIDER}`);
      await route.fulfill({
        response,
        headers: { ...response.headers(), 'content-security-policy': csp },
        body: (await response.text()).replace('<head>', `<head>\n    <meta name="console-oidc" content="${content}">`),
      });
    },
  );
  await page.route(
    (url) => url.href.startsWith(`${PROVIDER}/authorize?`),
    async (route) => {
      const url = new URL(route.request().url());
      seen.authorize = url;
      const answer = options.providerAnswer?.(url) ?? { code: 'code-1', state: url.searchParams.get('state') ?? '' };
      // A page that sends the browser back (a redirect answered here would not pass through the console page's own route).
      const back = `${redirectUri}?${new URLSearchParams(answer).toString()}`;
      await route.fulfill({
        status: 200,
        headers: { 'content-type': 'text/html' },
        body: `<!doctype html><title>Acme SSO</title><script>location.replace(${JSON.stringify(back)})</script>`,
      });
    },
  );
  await page.route(`${PROVIDER}/token`, async (route) => {
    seen.tokenForm = new URLSearchParams(route.request().postData() ?? '');
    await json(route, 200, { id_token: 'header.payload.signature', token_type: 'Bearer' }, { 'access-control-allow-origin': apiOrigin });
  });
  await page.route(`${api.apiUrl}/console-sessions/nonces`, (route) =>
    json(route, 201, { nonce: 'nonce-from-the-api', expiresAt: new Date(Date.now() + 600_000).toISOString() }),
  );
  await page.route(`${api.apiUrl}/console-sessions`, async (route) => {
    seen.idTokens.push((route.request().postDataJSON() as { idToken: string }).idToken);
    const answer = options.session ?? {
      status: 200,
      body: {
        token: STAFF_TOKEN,
        sessionId: SESSION_ID,
        email: 'ana@staff.test',
        role: options.role ?? 'admin',
        expiresAt: new Date(Date.now() + (options.ttlSeconds ?? 3600) * 1000).toISOString(),
      },
    };
    await json(route, answer.status, answer.body);
  });
  await page.route(
    (url) => url.origin === apiOrigin && url.pathname.startsWith('/console-sessions/wcs_'),
    async (route) => {
      seen.revoked.push(`${route.request().method()} ${new URL(route.request().url()).pathname}`);
      const status = options.revokeStatus ?? 204;
      await (status === 204 ? route.fulfill({ status }) : json(route, status, { title: 'Internal error', detail: 'Stubbed failure' }));
    },
  );
  await page.route(
    (url) => url.origin === apiOrigin && url.pathname === '/workspaces',
    (route) =>
      options.workspaces?.(route) ??
      json(route, 200, {
        items: [
          { slug: 'acme', name: 'Acme Inc.' },
          { slug: api.workspace, name: 'Demo workspace' },
          { slug: 'globex', name: 'Globex Corporation' },
        ],
        nextCursor: null,
      }),
  );
  // Workspace routes reach the real stack, as the stack's admin token.
  await page.route(
    (url) => url.origin === apiOrigin && url.pathname.startsWith('/workspaces/'),
    async (route) => {
      const headers = route.request().headers();
      if (headers.authorization !== `Bearer ${STAFF_TOKEN}`) return route.continue();
      await route.continue({ headers: { ...headers, authorization: `Bearer ${api.token}` } });
    },
  );
  return seen;
}

/** From the sign-in page through the provider and back, to the picker. */
async function signInAsStaff(page: Page, api: TestApi): Promise<void> {
  await page.goto(`${api.apiUrl}/console`);
  await page.getByRole('button', { name: 'Sign in with Acme SSO' }).click();
  await page.getByRole('heading', { name: 'Choose a workspace' }).waitFor();
}

describe.skipIf(!hasChromium)(`staff sign-in in the console${NO_CHROMIUM_REASON}`, () => {
  let api: TestApi;
  let browser: TestBrowser;

  beforeAll(async () => {
    api = await startTestApi({ schedules: false });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  it('offers the provider first and the API token second, and only the token form without a provider', async () => {
    const page = await browser.context.newPage();
    try {
      await page.goto(`${api.apiUrl}/console`);
      await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
      expect(await page.getByRole('button', { name: /Sign in with/ }).count()).toBe(0);
      await stubStaff(page, api);
      await page.reload();
      await page.getByRole('button', { name: 'Sign in with Acme SSO' }).waitFor();
      await page.getByRole('heading', { name: 'Sign in with an API token' }).waitFor();
      await page.keyboard.press('Tab');
      expect(await page.evaluate<string | undefined>('document.activeElement?.textContent')).toBe('Sign in with Acme SSO');
      expect(await seriousAxeFindings(page)).toEqual([]);
      await saveScreenshot(page, 'console-staff-sign-in');
    } finally {
      await page.close();
    }
  });

  it('sends the person to the provider with PKCE, state and the API nonce, and trades the code with the verifier', async () => {
    const page = await browser.context.newPage();
    try {
      const seen = await stubStaff(page, api);
      await signInAsStaff(page, api);
      const query = Object.fromEntries(seen.authorize!.searchParams);
      expect(query).toMatchObject({
        client_id: 'webhooks-console',
        redirect_uri: `${api.apiUrl}/console/`,
        response_type: 'code',
        scope: 'openid email profile',
        nonce: 'nonce-from-the-api',
        code_challenge_method: 'S256',
      });
      expect(query.state).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const verifier = seen.tokenForm!.get('code_verifier')!;
      expect(createHash('sha256').update(verifier).digest('base64url')).toBe(query.code_challenge);
      expect(Object.fromEntries(seen.tokenForm!)).toMatchObject({
        grant_type: 'authorization_code',
        code: 'code-1',
        client_id: 'webhooks-console',
        redirect_uri: `${api.apiUrl}/console/`,
      });
      expect(seen.idTokens).toEqual(['header.payload.signature']);
      // The code and state are gone from the address; nothing of the round trip is left in storage but the session.
      expect(new URL(page.url()).search).toBe('');
      expect(await page.evaluate<string[]>('Object.keys(sessionStorage)')).toEqual(['webhooks-console-session']);
    } finally {
      await page.close();
    }
  });

  it('picks a workspace by keyboard, names who is signed in, switches, and signs out at the API even when that fails', async () => {
    const page = await browser.context.newPage();
    try {
      const seen = await stubStaff(page, api, { revokeStatus: 500 });
      await signInAsStaff(page, api);
      await page.getByRole('button', { name: 'Acme Inc. acme' }).waitFor();
      expect(await seriousAxeFindings(page)).toEqual([]);
      await saveScreenshot(page, 'console-staff-workspace-picker');
      // The search box has focus: typing filters, Enter opens the first match.
      await page.keyboard.type('demo');
      expect(await page.getByRole('list', { name: 'Workspaces' }).getByRole('button').count()).toBe(1);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      const header = page.getByRole('banner');
      expect(await header.textContent()).toContain('ana@staff.test');
      expect(await header.textContent()).toContain('Staff · admin');
      await page.getByRole('button', { name: 'Switch workspace' }).click();
      await page.getByRole('searchbox', { name: 'Find a workspace' }).waitFor();
      // The arrow keys move through the list; the one open now is marked.
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowDown');
      expect(await page.evaluate<string | undefined>('document.activeElement?.getAttribute("aria-current")')).toBe('true');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign in with Acme SSO' }).waitFor();
      await expect.poll(() => seen.revoked, POLL).toEqual([`DELETE /console-sessions/${SESSION_ID}`]);
      expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    } finally {
      await page.close();
    }
  });

  it('shows a read role no control that changes anything', async () => {
    const page = await browser.context.newPage();
    try {
      const created = await api.call('POST', `/workspaces/${api.workspace}/webhooks`, {
        body: { url: 'https://hooks.example.com/orders', eventTypes: ['webhook.test_event'], description: 'Orders' },
      });
      expect(created.status).toBe(201);
      await stubStaff(page, api, { role: 'read' });
      await signInAsStaff(page, api);
      await page.getByRole('button', { name: `Demo workspace ${api.workspace}` }).click();
      await page.getByRole('link', { name: 'Endpoints' }).click();
      await page.getByRole('heading', { name: 'Endpoints' }).waitFor();
      await page.waitForLoadState('networkidle');
      expect(await page.getByRole('button', { name: 'New endpoint' }).count()).toBe(0);
      await page.goto(`${api.apiUrl}/console#/endpoints/${created.body.endpointId as string}`);
      await page.getByRole('heading', { name: 'Orders' }).waitFor();
      await page.waitForLoadState('networkidle');
      for (const name of ['Rotate secret', 'Send test event', 'Disable endpoint', 'Delete endpoint', 'Recover deliveries'])
        expect(await page.getByRole('button', { name }).count(), name).toBe(0);
      expect(await page.getByRole('banner').textContent()).toContain('Staff · read');
      await saveScreenshot(page, 'console-staff-read-only');
      await page.getByRole('link', { name: 'API tokens' }).click();
      await page.getByRole('heading', { name: 'API tokens' }).waitFor();
      expect(await page.getByRole('button', { name: 'New token' }).count()).toBe(0);
    } finally {
      await page.close();
    }
  });

  it('says in words that an account in no group has no access', async () => {
    const page = await browser.context.newPage();
    try {
      await stubStaff(page, api, {
        session: {
          status: 403,
          body: { tag: 'NoConsoleAccess', title: 'No console access', detail: 'noa@staff.test is in no group of this console.' },
        },
      });
      await page.goto(`${api.apiUrl}/console`);
      await page.getByRole('button', { name: 'Sign in with Acme SSO' }).click();
      await expect
        .poll(() => page.getByRole('alert').textContent(), POLL)
        .toContain('Your account has no access to this console: ask for one of its groups');
      expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
      expect(await seriousAxeFindings(page)).toEqual([]);
      await saveScreenshot(page, 'console-staff-no-access');
    } finally {
      await page.close();
    }
  });

  it('shows why an ID token was refused, and "Try again" starts over at the provider', async () => {
    const page = await browser.context.newPage();
    try {
      const seen = await stubStaff(page, api, {
        session: {
          status: 401,
          body: { tag: 'InvalidIdToken', title: 'Invalid ID token', detail: 'The ID token has expired (exp).' },
        },
      });
      await page.goto(`${api.apiUrl}/console`);
      await page.getByRole('button', { name: 'Sign in with Acme SSO' }).click();
      await expect.poll(() => page.getByRole('alert').textContent(), POLL).toContain('The ID token has expired (exp).');
      await saveScreenshot(page, 'console-staff-invalid-id-token');
      const first = seen.authorize!.searchParams.get('state');
      await page.getByRole('button', { name: 'Try again' }).click();
      await expect.poll(() => seen.authorize!.searchParams.get('state'), POLL).not.toBe(first);
      await expect.poll(() => seen.idTokens.length, POLL).toBe(2);
    } finally {
      await page.close();
    }
  });

  it('says the provider did not sign the person in (access_denied)', async () => {
    const page = await browser.context.newPage();
    try {
      const seen = await stubStaff(page, api, {
        providerAnswer: (url) => ({
          error: 'access_denied',
          error_description: 'End-User aborted interaction',
          state: url.searchParams.get('state')!,
        }),
      });
      await page.goto(`${api.apiUrl}/console`);
      await page.getByRole('button', { name: 'Sign in with Acme SSO' }).click();
      await expect.poll(() => page.getByRole('alert').textContent(), POLL).toContain('Acme SSO did not sign you in');
      expect(await page.getByRole('alert').textContent()).toContain('End-User aborted interaction');
      await saveScreenshot(page, 'console-staff-access-denied');
      expect(seen.tokenForm).toBeNull();
      expect(new URL(page.url()).search).toBe('');
    } finally {
      await page.close();
    }
  });

  it('refuses an answer whose state this tab did not send, without trading the code', async () => {
    const page = await browser.context.newPage();
    try {
      const seen = await stubStaff(page, api, { providerAnswer: () => ({ code: 'code-1', state: 'forged-state' }) });
      await page.goto(`${api.apiUrl}/console`);
      await page.getByRole('button', { name: 'Sign in with Acme SSO' }).click();
      await expect.poll(() => page.getByRole('alert').textContent(), POLL).toContain('does not belong to a sign-in started in this tab');
      // An answer opened in a tab that started nothing is refused the same way.
      await page.goto(`${api.apiUrl}/console/?code=code-2&state=another`);
      await expect.poll(() => page.getByRole('alert').textContent(), POLL).toContain('does not belong to a sign-in started in this tab');
      await saveScreenshot(page, 'console-staff-state-mismatch');
      expect(seen.tokenForm).toBeNull();
      expect(seen.idTokens).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("shows the picker's loading, empty and error states, and a search that matches nothing", async () => {
    const page = await browser.context.newPage();
    try {
      let answer: 'slow' | 'error' | 'empty' | 'ready' = 'slow';
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      await stubStaff(page, api, {
        workspaces: async (route) => {
          if (answer === 'slow') await held;
          if (answer === 'error')
            return json(route, 503, { tag: 'InternalError', title: 'Internal error', detail: 'The workspace list is not available.' });
          return json(route, 200, { items: answer === 'empty' ? [] : [{ slug: 'acme', name: 'Acme Inc.' }], nextCursor: null });
        },
      });
      await page.goto(`${api.apiUrl}/console`);
      await page.getByRole('button', { name: 'Sign in with Acme SSO' }).click();
      await page.getByRole('heading', { name: 'Choose a workspace' }).waitFor();
      await expect.poll(() => page.getByText('Loading workspaces…').count(), POLL).toBe(1);
      await saveScreenshot(page, 'console-staff-picker-loading');
      answer = 'error';
      release();
      await expect.poll(() => page.getByRole('alert').textContent(), POLL).toContain('The workspace list is not available.');
      await saveScreenshot(page, 'console-staff-picker-error');
      answer = 'empty';
      await page.getByRole('button', { name: 'Try again' }).click();
      await expect.poll(() => page.getByText('There are no workspaces yet').count(), POLL).toBe(1);
      await saveScreenshot(page, 'console-staff-picker-empty');
      answer = 'ready';
      await page.reload();
      await page.getByRole('button', { name: 'Acme Inc. acme' }).waitFor();
      await page.getByRole('searchbox', { name: 'Find a workspace' }).fill('zzz');
      await expect.poll(() => page.getByText('No workspace matches “zzz”').count(), POLL).toBe(1);
      expect(await page.getByRole('button', { name: 'Acme Inc. acme' }).count()).toBe(0);
      await saveScreenshot(page, 'console-staff-picker-no-match');
    } finally {
      await page.close();
    }
  });

  it('fits the sign-in choice, the picker and a staff header on a 390 px wide screen', async () => {
    const narrow = await launchChromium({ width: 390, height: 844 });
    try {
      const page = await narrow.context.newPage();
      await stubStaff(page, api);
      const overflow = () => page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      await page.goto(`${api.apiUrl}/console`);
      await page.getByRole('button', { name: 'Sign in with Acme SSO' }).waitFor();
      expect(await overflow(), 'sign-in').toBeLessThanOrEqual(0);
      await saveScreenshot(page, 'console-staff-sign-in-390');
      await page.getByRole('button', { name: 'Sign in with Acme SSO' }).click();
      await page.getByRole('heading', { name: 'Choose a workspace' }).waitFor();
      expect(await overflow(), 'picker').toBeLessThanOrEqual(0);
      await saveScreenshot(page, 'console-staff-picker-390');
      await page.getByRole('button', { name: `Demo workspace ${api.workspace}` }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await page.waitForLoadState('networkidle');
      expect(await overflow(), 'overview').toBeLessThanOrEqual(0);
      expect(await seriousAxeFindings(page)).toEqual([]);
      await saveScreenshot(page, 'console-staff-390');
    } finally {
      await narrow.close();
    }
  });

  it('returns to sign-in when the hour is up: "Your session ended; sign in again"', async () => {
    const page = await browser.context.newPage();
    try {
      await stubStaff(page, api, { ttlSeconds: 4 });
      await signInAsStaff(page, api);
      await page.getByRole('button', { name: `Demo workspace ${api.workspace}` }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await page.getByRole('button', { name: 'Sign in with Acme SSO' }).waitFor({ timeout: 10_000 });
      expect(await page.getByRole('status').first().textContent()).toBe('Your session ended; sign in again.');
      await saveScreenshot(page, 'console-staff-session-ended');
      expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    } finally {
      await page.close();
    }
  });
});
