/**
 * The console's designed states in Chromium against the real local stack: a session that ends
 * (401) returns to sign-in with the reason, a rate-limited token sees when to retry, an unknown
 * delivery and an address that does not decode get a clear not-found page, the keyboard alone signs in, and every page fits a
 * 390 px wide screen (tables scroll inside their own box, never the page).
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../../lambdas/operations/admin';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { hasChromium, launchChromium, NO_CHROMIUM_REASON, saveScreenshot, seriousAxeFindings, type TestBrowser } from '../helpers/browser';

async function signIn(page: Page, api: TestApi, token: string): Promise<void> {
  await page.goto(`${api.apiUrl}/console`);
  await page.getByRole('textbox', { name: 'Workspace' }).fill(api.workspace);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** Pairs of the health chart's time-axis labels (the lowest row of its plain labels) whose boxes overlap, as "a / b". */
async function overlappingAxisLabels(page: Page): Promise<string[]> {
  await page.locator('svg.chart').first().waitFor();
  // A string, as the other page scripts here: the tests compile without the DOM's types.
  return page.evaluate<string[]>(`(() => {
    const labels = [...document.querySelectorAll('svg.chart text:not([class])')].map((t) => ({ text: t.textContent, box: t.getBoundingClientRect() }));
    const bottom = Math.max(...labels.map((l) => l.box.top));
    const row = labels.filter((l) => Math.abs(l.box.top - bottom) < 1).sort((a, b) => a.box.left - b.box.left);
    const overlaps = [];
    for (let i = 1; i < row.length; i++) if (row[i].box.left < row[i - 1].box.right) overlaps.push(row[i - 1].text + ' / ' + row[i].text);
    return overlaps;
  })()`);
}

describe.skipIf(!hasChromium)(`console states${NO_CHROMIUM_REASON}`, () => {
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

  it('signs in by keyboard alone', async () => {
    const page = await browser.context.newPage();
    try {
      await page.goto(`${api.apiUrl}/console`);
      await page.getByRole('textbox', { name: 'Workspace' }).waitFor();
      await page.keyboard.press('Tab');
      expect(await page.evaluate<string | undefined>('document.activeElement?.getAttribute("name")')).toBe('workspace');
      await page.keyboard.type(api.workspace);
      await page.keyboard.press('Tab');
      await page.keyboard.type(api.token);
      await page.keyboard.press('Enter');
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      // The page's heading takes focus, so a screen reader announces where the user is.
      expect(await page.evaluate<string | undefined>('document.activeElement?.tagName')).toBe('H1');
    } finally {
      await page.close();
    }
  });

  it('returns to sign-in with the reason when the token stops working', async () => {
    const page = await browser.context.newPage();
    try {
      const { token, tokenId } = await issueToken(api.table, api.workspace, { name: 'short-lived', scopes: ['read'] });
      await signIn(page, api, token);
      expect((await api.call('DELETE', `/workspaces/${api.workspace}/api-tokens/${tokenId}`)).status).toBe(204);
      await page.getByRole('link', { name: 'Endpoints' }).click();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      expect(await page.locator('main').textContent()).toMatch(/session ended/i);
      expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
      await saveScreenshot(page, 'console-session-ended');
    } finally {
      await page.close();
    }
  });

  it('shows a clear not-found page for an unknown delivery', async () => {
    const page = await browser.context.newPage();
    try {
      await signIn(page, api, api.token);
      await page.goto(`${api.apiUrl}/console#/deliveries/whd_01JD2YE6F7G8H9J0K1M2N3P4QR`);
      await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/not found/i);
      expect(await seriousAxeFindings(page)).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('shows the not-found page for an address that is not valid percent-encoding', async () => {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    try {
      await signIn(page, api, api.token);
      await page.goto(`${api.apiUrl}/console#/deliveries/%ZZ`);
      await page.getByRole('heading', { name: 'Page not found' }).waitFor();
      expect(await seriousAxeFindings(page)).toEqual([]);
      await saveScreenshot(page, 'console-not-found-malformed');
      await page.getByRole('link', { name: 'Go to the overview' }).click();
      await page.getByRole('heading', { name: 'Page not found' }).waitFor({ state: 'detached' });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('fits every page on a 390 px wide screen', async () => {
    const narrow = await launchChromium({ width: 390, height: 844 });
    try {
      const page = await narrow.context.newPage();
      const created = await api.call('POST', `/workspaces/${api.workspace}/webhooks`, {
        body: {
          url: 'https://hooks.example.com/a-rather-long-path/that/keeps/going/for-the-narrow-screen',
          eventTypes: ['webhook.test_event'],
          description: 'Narrow screen check',
        },
      });
      expect(created.status).toBe(201);
      await signIn(page, api, api.token);
      for (const hash of [
        'overview',
        'endpoints',
        `endpoints/${created.body.endpointId as string}`,
        'deliveries',
        'event-types',
        'tokens',
        'audit',
        'notifications',
        'members',
      ]) {
        await page.goto(`${api.apiUrl}/console#/${hash}`);
        await page.getByRole('heading', { level: 1 }).waitFor();
        await page.waitForLoadState('networkidle');
        const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
        expect(overflow, `#/${hash} scrolls sideways by ${overflow} px`).toBeLessThanOrEqual(0);
        expect(await seriousAxeFindings(page), `axe on #/${hash} at 390 px`).toEqual([]);
        if (hash.startsWith('endpoints/'))
          expect(await overlappingAxisLabels(page), 'health chart hour labels that overlap at 390 px').toEqual([]);
        await saveScreenshot(page, `console-390-${hash.includes('/') ? 'endpoint' : hash}`);
      }
    } finally {
      await narrow.close();
    }
    // Nine pages, each with an axe scan and a screenshot, on a machine shared with other suites.
  }, 90_000);
});

describe.skipIf(!hasChromium)(`console when rate-limited${NO_CHROMIUM_REASON}`, () => {
  let api: TestApi;
  let browser: TestBrowser;

  beforeAll(async () => {
    api = await startTestApi({ schedules: false, rateLimits: JSON.stringify({ rest_read: { limit: 2, windowSeconds: 3600 } }) });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  it('says the token sent too many requests and when to try again', async () => {
    const page = await browser.context.newPage();
    await signIn(page, api, api.token);
    for (const name of ['Endpoints', 'Members', 'Audit log']) await page.getByRole('link', { name, exact: true }).click();
    // The window is an hour: the wait reads in minutes, not thousands of seconds (in seconds only in its last 90 s).
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/try again in (\d+ minutes?|[1-8]?\d seconds?)\./i);
    await saveScreenshot(page, 'console-rate-limited');
  });
});
