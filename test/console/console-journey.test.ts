/**
 * The console as a person uses it (sign in, set up an endpoint, follow and recover its deliveries,
 * manage tokens), in Debian's Chromium against the real local stack and a real loopback
 * receiver: every step by role and accessible name (the names of docs/architecture.md#console),
 * an axe-core scan and a screenshot of every page on the way.
 * Screenshots go to `test-results/screenshots` (`npm run screenshots` refreshes the README's).
 */
import type { Page, Request } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { usePipelineApi } from '../helpers/local-api';
import { hasChromium, launchChromium, NO_CHROMIUM_REASON, saveScreenshot, seriousAxeFindings, type TestBrowser } from '../helpers/browser';

describe.skipIf(!hasChromium)(`the console journey in a browser${NO_CHROMIUM_REASON}`, () => {
  const pipeline = usePipelineApi();
  let browser: TestBrowser;
  let page: Page;
  let receiverMode: 'ok' | 'fail' = 'ok';
  let receiver: Awaited<ReturnType<typeof pipeline.receiver>>;
  const requests: string[] = [];
  const pageErrors: string[] = [];
  const startedAt = new Date();
  let secret = '';
  let readToken = '';

  beforeAll(async () => {
    receiver = await pipeline.receiver((_req, res) => {
      res.writeHead(receiverMode === 'ok' ? 200 : 500, { 'content-type': 'application/json' });
      res.end(receiverMode === 'ok' ? '{"ok":true}' : '{"error":"maintenance"}');
    });
    // The receiver lives for the whole journey, not one test.
    pipeline.stops.splice(0);
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('request', (r: Request) => requests.push(r.url()));
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') pageErrors.push(m.text());
    });
  });

  afterEach(async (ctx) => {
    // What the page showed when a step failed: the first thing to look at.
    if (ctx.task.result?.state === 'fail' && page)
      await saveScreenshot(page, `failed-${ctx.task.name.slice(0, 40).replace(/\W+/g, '-')}`).catch(() => undefined);
  });

  afterAll(async () => {
    await browser?.close();
    await receiver?.stop();
  });

  /** Screenshot and axe scan of the page as it is now. */
  async function checkPage(name: string): Promise<void> {
    await saveScreenshot(page, `console-${name}`);
    expect(await seriousAxeFindings(page), `axe on ${name}`).toEqual([]);
  }

  /** Follows a link of the console's navigation. */
  async function nav(name: string): Promise<void> {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true }).click();
  }

  /** Clicks the delivery page's Refresh and waits for the reload to finish; answers the Attempts region's text. */
  async function refreshedAttempts(): Promise<string> {
    await page.getByRole('button', { name: 'Refresh' }).click();
    const attempts = page.getByRole('region', { name: 'Attempts' });
    await attempts
      .getByRole('status')
      .filter({ hasText: /loading/i })
      .waitFor({ state: 'detached' });
    return (await attempts.textContent()) ?? '';
  }

  async function signIn(token: string): Promise<void> {
    await page.goto(`${pipeline.api.apiUrl}/console`);
    await page.getByRole('textbox', { name: 'Workspace' }).fill(pipeline.api.workspace);
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  }

  it('signs in with the workspace and a token kept in sessionStorage only', async () => {
    const response = await page.goto(`${pipeline.api.apiUrl}/console`);
    expect(response?.headers()['content-security-policy']).toContain("default-src 'self'");
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await checkPage('sign-in');

    await page.getByRole('textbox', { name: 'Workspace' }).fill(pipeline.api.workspace);
    await page.getByLabel('API token').fill('whk_not-a-real-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/./);

    await page.getByLabel('API token').fill(pipeline.api.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Overview' }).waitFor();
    await checkPage('overview');

    const storage = await page.evaluate<{ session: string; local: number; url: string }>(
      '({ session: JSON.stringify(sessionStorage), local: localStorage.length, url: location.href })',
    );
    expect(storage.session).toContain(pipeline.api.token);
    expect(storage.local).toBe(0);
    expect(storage.url).not.toContain(pipeline.api.token);
  });

  it('refuses a private URL on the URL field, then creates the endpoint', async () => {
    await nav('Endpoints');
    await page.getByRole('button', { name: 'New endpoint' }).waitFor();
    // The empty state, not the loading one that comes first.
    await page.getByText('No endpoints yet').waitFor();
    await checkPage('endpoints-empty');
    await page.getByRole('button', { name: 'New endpoint' }).click();

    const url = page.getByRole('textbox', { name: 'URL' });
    await url.fill('https://10.0.0.7/hook');
    await page.getByRole('checkbox', { name: 'webhook.test_event' }).check();
    await page.getByRole('textbox', { name: 'Description' }).fill('Orders receiver');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await expect.poll(() => url.getAttribute('aria-invalid')).toBe('true');
    await checkPage('endpoint-new-refused');

    await url.fill(receiver.url);
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await page.getByRole('button', { name: 'Rotate secret' }).waitFor();
    await checkPage('endpoint');
  });

  it('rotates the secret: shown once, gone from the page after Done', async () => {
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog').waitFor();
    await page.getByRole('button', { name: 'Rotate', exact: true }).click();
    const field = page.getByRole('textbox', { name: 'New signing secret' });
    await field.waitFor();
    secret = await field.inputValue();
    expect(secret).toMatch(/^whsec_/);
    expect(await field.getAttribute('readonly')).not.toBeNull();
    await page.getByRole('button', { name: 'Copy secret' }).waitFor();
    await checkPage('rotate-secret');

    await page.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    // Focus returns to what opened the dialog.
    expect(await page.evaluate<string | undefined>('document.activeElement?.textContent')).toBe('Rotate secret');
  });

  it('titles the endpoint page by its description, with sections to jump to', async () => {
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Orders receiver');
    const onThisPage = page.getByRole('navigation', { name: 'On this page' });
    for (const name of ['Overview and health', 'Deliveries', 'Settings']) {
      await onThisPage.getByRole('link', { name }).waitFor();
      expect(await page.getByRole('heading', { level: 2, name }).count(), name).toBe(1);
    }
    await onThisPage.getByRole('link', { name: 'Settings' }).click();
    // The heading jumped to has focus (keyboard and screen reader users land there too), and the address says where.
    expect(await page.evaluate<string | undefined>('document.activeElement?.textContent')).toBe('Settings');
    expect(await page.evaluate<string>('location.hash')).toContain('section=settings');
    await page.evaluate('window.scrollTo(0, 0)');
  });

  it('sends a test event and shows it delivered with its attempt evidence, signed with the new secret', async () => {
    await page.getByRole('button', { name: 'Send test event' }).click();
    const sent = page.locator('.success').filter({ hasText: 'Test event queued' });
    const link = sent.getByRole('link', { name: /^whd_/ });
    await link.waitFor();
    // No click on any "Refresh": the page follows the test send until it is delivered, in the message and in the log.
    await expect.poll(() => sent.textContent(), { timeout: 15_000 }).toContain('Delivered');
    await page
      .getByRole('region', { name: 'Deliveries' })
      .getByRole('table')
      .getByText('Delivered', { exact: true })
      .waitFor({ timeout: 15_000 });
    await link.click();
    const attempts = page.getByRole('region', { name: 'Attempts' });
    await expect.poll(refreshedAttempts, { timeout: 15_000 }).toMatch(/Delivered/);
    await expect.poll(() => attempts.textContent()).toContain('200');
    await checkPage('delivery');

    const seen = receiver.seen.at(-1)!;
    expect(() => new Webhook(secret).verify(seen.body, seen.headers as Record<string, string>)).not.toThrow();
  });

  it('shows the retries and the dead letter while the receiver fails', async () => {
    receiverMode = 'fail';
    await page.goBack();
    // The message of the first send is gone once the page is left and opened again.
    await page.getByRole('button', { name: 'Send test event' }).click();
    const link = page.locator('.success').filter({ hasText: 'Test event queued' }).getByRole('link', { name: /^whd_/ });
    await link.waitFor();
    const deliveryId = (await link.textContent())!;
    await link.click();
    const attempts = page.getByRole('region', { name: 'Attempts' });
    // No click: the page refreshes by itself while the delivery is retrying, until it is dead-lettered.
    await expect.poll(() => attempts.textContent(), { timeout: 30_000 }).toContain('retries_exhausted');
    // Seven HTTP attempts (the first and six retries), then the recorded decision to dead-letter: a header row and 8 rows.
    await expect.poll(() => attempts.getByRole('row').count()).toBe(9);
    expect(await attempts.textContent()).toContain('Attempt 7');
    expect(await attempts.textContent()).toContain('retries_exhausted');
    // The 7th attempt was the last: nothing retried it.
    const seventh = attempts.getByRole('row').filter({ has: page.getByRole('button', { name: 'Attempt 7', exact: true }) });
    expect(await seventh.textContent()).toContain('Failed: final attempt');
    expect(await attempts.textContent()).not.toMatch(/retrying/i);
    await checkPage('delivery-dead-lettered');

    // The whole timeline fits one 1280×800 screen.
    await page.setViewportSize({ width: 1280, height: 800 });
    const box = await attempts.boundingBox();
    expect(box!.height, 'height of the Attempts region').toBeLessThanOrEqual(800);
    await page.setViewportSize({ width: 1280, height: 900 });

    // Each row opens to its evidence, by keyboard too: headers and the response body prefix.
    const first = attempts.getByRole('button', { name: 'Attempt 1', exact: true });
    expect(await first.getAttribute('aria-expanded')).toBe('false');
    await first.focus();
    await page.keyboard.press('Enter');
    expect(await first.getAttribute('aria-expanded')).toBe('true');
    await attempts.getByRole('table', { name: 'Request headers of attempt 1' }).getByText('webhook-signature').waitFor();
    expect(await attempts.textContent()).toContain('{"error":"maintenance"}');
    await checkPage('delivery-attempt-open');
    await page.keyboard.press('Space');
    expect(await first.getAttribute('aria-expanded')).toBe('false');

    await nav('Deliveries');
    await page.getByRole('group', { name: 'Status' }).getByRole('checkbox', { name: 'Dead-lettered' }).check();
    await expect.poll(() => page.evaluate<string>('location.hash')).toContain('status=dead_lettered');
    await page.getByRole('link', { name: deliveryId }).waitFor();
    // The last error, in words, in its own column.
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: deliveryId }) });
    expect(await row.textContent()).toContain('http_500The receiver answered HTTP 500.');
    await checkPage('deliveries-dead-lettered');

    // "Go to delivery": a malformed id says so; a well-formed one opens the delivery.
    const goTo = page.getByRole('textbox', { name: 'Delivery id' });
    await goTo.fill('whd_nope');
    await page.getByRole('button', { name: 'Go to delivery' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/not a delivery id/i);
    expect(await goTo.getAttribute('aria-invalid')).toBe('true');
    await checkPage('deliveries-go-to-malformed');
    await goTo.fill(deliveryId);
    await goTo.press('Enter');
    await page.getByRole('heading', { level: 1, name: `Delivery ${deliveryId}` }).waitFor();
    await page.goBack();
  });

  it("recovers the endpoint's failures once the receiver is back, and shows them delivered", async () => {
    receiverMode = 'ok';
    await nav('Endpoints');
    await page.getByRole('link', { name: receiver.url }).click();
    await page.getByRole('button', { name: 'Recover deliveries' }).click();
    const dialog = page.getByRole('dialog');
    const local = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await dialog.getByRole('textbox', { name: 'From' }).fill(local(new Date(startedAt.getTime() - 60 * 60_000)));
    await dialog.getByRole('checkbox', { name: 'Include deliveries already replayed' }).waitFor();
    await dialog.getByRole('button', { name: 'Count deliveries' }).click();
    await expect.poll(() => dialog.textContent()).toMatch(/(^|\D)1 delivery matches/);
    await checkPage('recover-count');
    await dialog.getByRole('button', { name: 'Start recovery' }).click();
    await expect.poll(() => dialog.textContent(), { timeout: 20_000 }).toMatch(/completed/i);
    await checkPage('recover-done');
    await dialog
      .getByRole('button', { name: /close|done/i })
      .first()
      .click();

    await nav('Deliveries');
    await page.getByRole('group', { name: 'Status' }).getByRole('checkbox', { name: 'Delivered' }).check();
    await expect.poll(() => page.getByRole('link', { name: /^whd_/ }).count(), { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
  });

  it('creates a read token (shown once) and revokes another', async () => {
    await nav('API tokens');
    for (const name of ['reader', 'to-revoke']) {
      await page.getByRole('button', { name: 'New token' }).click();
      await page.getByRole('textbox', { name: 'Name' }).fill(name);
      await page.getByRole('checkbox', { name: 'read', exact: true }).check();
      await page.getByRole('button', { name: 'Create token' }).click();
      const field = page.getByRole('textbox', { name: 'New API token' });
      await field.waitFor();
      const token = await field.inputValue();
      expect(token).toMatch(/^whk_/);
      if (name === 'reader') {
        readToken = token;
        await checkPage('token-created');
      }
      await page.getByRole('button', { name: 'Done' }).click();
      await expect.poll(() => page.getByRole('textbox', { name: 'New API token' }).count()).toBe(0);
    }
    await checkPage('tokens');
    const row = page.getByRole('row', { name: /to-revoke/ });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke token' }).click();
    await expect.poll(() => page.getByRole('row', { name: /to-revoke/ }).count()).toBe(0);
  });

  it('signs out and forgets the token; a read token sees no write buttons', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);

    await signIn(readToken);
    await nav('Endpoints');
    // A read token sees endpoint URLs redacted to scheme and host: a receiver's URL may hold a secret.
    const redacted = page.getByRole('link', { name: `${new URL(receiver.url).origin}/…`, exact: true });
    await redacted.waitFor();
    expect(await page.getByText(receiver.url).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'New endpoint' }).count()).toBe(0);
    await redacted.click();
    await page.getByRole('heading', { level: 1 }).waitFor();
    for (const name of ['Rotate secret', 'Send test event', 'Disable endpoint', 'Delete endpoint', 'Recover deliveries', 'Save changes']) {
      expect(await page.getByRole('button', { name }).count(), name).toBe(0);
    }
    await checkPage('endpoint-read-only');
  });

  it('asked nothing of any host but the API, and logged no page error', () => {
    const origin = new URL(pipeline.api.apiUrl).origin;
    expect(requests.filter((u) => !u.startsWith(origin) && !u.startsWith('data:'))).toEqual([]);
    expect(pageErrors.filter((e) => !/status of (4\d\d)/.test(e))).toEqual([]);
  });
});
