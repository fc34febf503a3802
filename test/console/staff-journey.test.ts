/**
 * The staff journey in Chromium against a real OpenID provider (`oidc-provider` on loopback,
 * test/support/oidc-issuer.ts) and the real local stack with `consoleOidc` (docs/console.md#staff-sign-in):
 * people click "Sign in with …", log in on the provider's own login page, pick a workspace, do what
 * their role allows, are refused what it does not (the control hidden, and the API's 403), and
 * find themselves named in the workspace's audit log. Also the refusals a real provider gives: a
 * person in no group, and a sign-in cancelled at the provider.
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureWorkspace, issueToken } from '../../lambdas/operations/admin';
import { startOidcIssuer, TEST_STAFF_ROLES, type OidcIssuer, type TestUser } from '../support/oidc-issuer';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { hasChromium, launchChromium, NO_CHROMIUM_REASON, saveScreenshot, seriousAxeFindings, type TestBrowser } from '../helpers/browser';

const PROVIDER_NAME = 'Test IdP';
/** The people at the provider, by the role their groups give (TEST_STAFF_ROLES): admin, write, read, and none. */
const person = (name: string, groups: string[]): TestUser => ({
  accountId: `${name}@staff.test`,
  email: `${name}@staff.test`,
  emailVerified: true,
  groups,
  password: `${name}-pass`,
});
const ANA = person('ana', ['webhooks-admins']);
const OLI = person('oli', ['webhooks-oncall']);
const RUI = person('rui', ['webhooks-support']);
const NOA = person('noa', ['marketing']);
const STORAGE_KEY = 'webhooks-console-session';

/** A free loopback port: the provider must know the console's address before the stack starts. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
}

/** Signs `who` in through the provider's login page; ends on the workspace picker. */
async function staffSignIn(page: Page, api: TestApi, who: { accountId: string; password: string }): Promise<void> {
  await page.goto(`${api.apiUrl}/console`);
  await page.getByRole('button', { name: `Sign in with ${PROVIDER_NAME}` }).click();
  // The provider's own login page.
  await page.locator('input[name="login"]').fill(who.accountId);
  await page.locator('input[name="password"]').fill(who.password);
  await page.getByRole('button', { name: 'Sign-in' }).click();
}

/** The staff token this tab keeps (to ask the API directly what the console no longer offers). */
async function storedToken(page: Page): Promise<string> {
  const raw = await page.evaluate<string | null>(`sessionStorage.getItem(${JSON.stringify(STORAGE_KEY)})`);
  return (JSON.parse(raw ?? '{}') as { token: string }).token;
}

describe.skipIf(!hasChromium)(`staff sign-in journey with a real OpenID provider${NO_CHROMIUM_REASON}`, () => {
  let api: TestApi;
  let issuer: OidcIssuer;
  let browser: TestBrowser;

  beforeAll(async () => {
    const port = await freePort();
    issuer = await startOidcIssuer({ redirectUris: [`http://127.0.0.1:${port}/console/`], users: [ANA, OLI, RUI, NOA] });
    api = await startTestApi({
      port,
      schedules: false,
      consoleOidc: { issuer: issuer.issuer, clientId: issuer.clientId, roles: TEST_STAFF_ROLES, name: PROVIDER_NAME },
    });
    await ensureWorkspace(api.table, 'acme', 'Acme Inc.');
    await ensureWorkspace(api.table, 'globex', 'Globex Corporation');
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await issuer?.close();
  });

  it('a write-role person picks a workspace, adds an endpoint, may not create a token, and is named in the audit log', async () => {
    const page = await browser.context.newPage();
    try {
      await staffSignIn(page, api, OLI);
      await page.getByRole('heading', { name: 'Choose a workspace' }).waitFor();
      await page.getByRole('button', { name: 'Acme Inc. acme' }).waitFor();
      expect(await seriousAxeFindings(page)).toEqual([]);
      await page.getByRole('searchbox', { name: 'Find a workspace' }).fill('acme');
      await page.getByRole('button', { name: 'Acme Inc. acme' }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      expect(await page.getByRole('banner').textContent()).toContain('oli@staff.test');

      // A write this role allows.
      await page.getByRole('link', { name: 'Endpoints' }).click();
      await page.getByRole('button', { name: 'New endpoint' }).click();
      await page.getByRole('textbox', { name: 'URL' }).fill('https://hooks.acme.example/staff-added');
      await page.getByRole('checkbox', { name: 'webhook.test_event' }).check();
      await page.getByRole('button', { name: 'Create endpoint' }).click();
      await page.getByRole('button', { name: 'Rotate secret' }).waitFor();

      // One it does not: no control, and the API says 403 to the session's own token.
      await page.getByRole('link', { name: 'API tokens' }).click();
      await page.getByRole('heading', { name: 'API tokens' }).waitFor();
      await page.waitForLoadState('networkidle');
      expect(await page.getByRole('button', { name: 'New token' }).count()).toBe(0);
      const token = await storedToken(page);
      const refused = await api.call('POST', '/workspaces/acme/api-tokens', { token, body: { name: 'nope', scopes: ['read'] } });
      expect(refused.status).toBe(403);

      // Named in the workspace's audit log.
      await page.getByRole('link', { name: 'Audit log' }).click();
      await expect
        .poll(() => page.getByRole('table', { name: 'Audit log' }).textContent(), { timeout: 10_000 })
        .toContain('oli@staff.test (platform staff)');
      expect(await seriousAxeFindings(page)).toEqual([]);
      await saveScreenshot(page, 'console-staff-audit');

      // Sign out ends the session at the API: its token no longer works.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: `Sign in with ${PROVIDER_NAME}` }).waitFor();
      await expect.poll(async () => (await api.call('GET', '/workspaces/acme/overview', { token })).status, { timeout: 10_000 }).toBe(401);
    } finally {
      await page.close();
      await browser.context.clearCookies();
    }
  });

  it('an admin creates a token the workspace sees as made by "Platform staff"', async () => {
    const page = await browser.context.newPage();
    try {
      await staffSignIn(page, api, ANA);
      await page.getByRole('button', { name: 'Acme Inc. acme' }).click();
      await page.getByRole('link', { name: 'API tokens' }).click();
      await page.getByRole('button', { name: 'New token' }).click();
      await page.getByRole('textbox', { name: 'Name' }).fill('support-made');
      await page.getByRole('checkbox', { name: 'read', exact: true }).check();
      await page.getByRole('button', { name: 'Create token' }).click();
      await page.getByRole('textbox', { name: 'New API token' }).waitFor();
      await page.getByRole('button', { name: 'Done' }).click();
      const row = page.getByRole('row').filter({ hasText: 'support-made' });
      await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain('Platform staff');
      expect(await row.textContent()).not.toContain('ana@staff.test');
      // Ana may switch to another workspace without signing in again.
      await page.getByRole('button', { name: 'Switch workspace' }).click();
      await page.getByRole('button', { name: 'Globex Corporation globex' }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      expect(await page.getByRole('banner').textContent()).toContain('Globex Corporation');
    } finally {
      await page.close();
      await browser.context.clearCookies();
    }
  });

  it('a read-role person sees no control that changes anything, and the API refuses the write', async () => {
    const page = await browser.context.newPage();
    try {
      const { token: acmeAdmin } = await issueToken(api.table, 'acme', { name: 'acme-admin', scopes: ['admin'] });
      const created = await api.call('POST', '/workspaces/acme/webhooks', {
        token: acmeAdmin,
        body: { url: 'https://hooks.acme.example/read-only-view', eventTypes: ['webhook.test_event'], description: 'Orders' },
      });
      expect(created.status).toBe(201);
      await staffSignIn(page, api, RUI);
      await page.getByRole('button', { name: 'Acme Inc. acme' }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await page.goto(`${api.apiUrl}/console#/endpoints/${created.body.endpointId as string}`);
      await page.getByRole('heading', { name: 'Orders' }).waitFor();
      await page.waitForLoadState('networkidle');
      for (const name of ['Rotate secret', 'Send test event', 'Disable endpoint', 'Delete endpoint', 'Recover deliveries'])
        expect(await page.getByRole('button', { name }).count(), name).toBe(0);
      expect(await page.getByRole('banner').textContent()).toContain('Staff · read');
      const token = await storedToken(page);
      const refused = await api.call('POST', '/workspaces/acme/webhooks', {
        token,
        body: { url: 'https://hooks.acme.example/read-role', eventTypes: ['webhook.test_event'] },
      });
      expect(refused.status).toBe(403);
    } finally {
      await page.close();
      await browser.context.clearCookies();
    }
  });

  it('a person in no group is told they have no access, and no session is kept', async () => {
    const page = await browser.context.newPage();
    try {
      await staffSignIn(page, api, NOA);
      await expect
        .poll(() => page.getByRole('alert').textContent(), { timeout: 10_000 })
        .toContain('Your account has no access to this console: ask for one of its groups');
      expect(await page.evaluate<string | null>(`sessionStorage.getItem(${JSON.stringify(STORAGE_KEY)})`)).toBeNull();
      expect(new URL(page.url()).search).toBe('');
      expect(await seriousAxeFindings(page)).toEqual([]);
    } finally {
      await page.close();
      await browser.context.clearCookies();
    }
  });

  it('a sign-in cancelled on the provider’s page says so', async () => {
    const page = await browser.context.newPage();
    try {
      await page.goto(`${api.apiUrl}/console`);
      await page.getByRole('button', { name: `Sign in with ${PROVIDER_NAME}` }).click();
      await page.getByRole('link', { name: '[ Cancel ]' }).click();
      await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 10_000 }).toContain(`${PROVIDER_NAME} did not sign you in`);
    } finally {
      await page.close();
      await browser.context.clearCookies();
    }
  });
});
