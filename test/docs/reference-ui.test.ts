/**
 * `/reference` as a person sees it: the real local stack serves the page, and
 * headless Chromium (Debian's, driven by playwright-core) renders it from
 * `/openapi.json` with no request leaving this host. `.ci/run` installs
 * Chromium; elsewhere, without /usr/bin/chromium, the one test is skipped.
 *
 * REFERENCE_UI_SCREENSHOT=/some/file.png keeps a full-page screenshot.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../lambdas/contract/operations';
import { deploymentCatalogue } from '../../lambdas/domain/configured-event-types';
import { startTestApi, type TestApi } from '../helpers/local-api';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
/** As the machine notes say: without the background-networking flags, Chromium tries hosts this network refuses. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

let api: TestApi | undefined;
let browser: Browser | undefined;
let context: BrowserContext | undefined;
let profileDir: string | undefined;

beforeAll(async () => {
  if (!hasChromium) return;
  api = await startTestApi();
  profileDir = mkdtempSync(join(tmpdir(), 'webhooks-chromium-'));
  // A fresh profile for every run (launchPersistentContext is how Playwright takes a user data dir).
  context = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
  browser = context.browser() ?? undefined;
});

afterAll(async () => {
  // Each step on its own, so a failure in one still closes the others.
  await context?.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await api?.close().catch(() => undefined);
  if (profileDir) rmSync(profileDir, { recursive: true, force: true });
});

describe('the /reference page in a browser', () => {
  it.skipIf(!hasChromium)(
    `renders the operations and the webhooks from /openapi.json, with every asset from this host${hasChromium ? '' : ' (SKIPPED: no Chromium at /usr/bin/chromium; `apt-get install chromium`, as .ci/run does)'}`,
    async () => {
      const page = await context!.newPage();
      const requested: string[] = [];
      const failures: string[] = [];
      page.on('request', (r) => requested.push(r.url()));
      page.on('requestfailed', (r) => failures.push(`${r.url()}: ${r.failure()?.errorText ?? 'failed'}`));
      page.on('pageerror', (e) => failures.push(`page error: ${e.message}`));
      page.on('console', (m) => {
        if (m.type() === 'error') failures.push(`console: ${m.text()}`);
      });

      const response = await page.goto(`${api!.apiUrl}/reference`, { waitUntil: 'load' });
      expect(response?.status()).toBe(200);

      // The operations, grouped by tag, each with its path and summary.
      const webhooksPath = page.locator('.opblock-tag-section .opblock-summary-path[data-path="/workspaces/{slug}/webhooks"]');
      await webhooksPath.first().waitFor({ timeout: 20_000 });
      await expect.poll(() => page.locator('.opblock-tag-section .opblock').count()).toBe(OPERATIONS.length);
      const summaries = await page.locator('.opblock-tag-section .opblock-summary-description').allInnerTexts();
      expect(summaries.sort()).toEqual(OPERATIONS.map((o) => o.summary).sort());
      for (const op of OPERATIONS) {
        expect(await page.locator(`.opblock-tag-section .opblock-summary-path[data-path="${op.path}"]`).first().isVisible(), op.path).toBe(true);
      }

      // The webhooks section: one POST per catalogue type, configured ones included.
      const webhooks = page.locator('.webhooks');
      expect(await webhooks.locator('h2').innerText()).toBe('Webhooks');
      const names = deploymentCatalogue().types.map((t) => t.name);
      expect(await webhooks.locator('.opblock-summary-path').evaluateAll((els) => els.map((e) => e.getAttribute('data-path')))).toEqual(names);

      // Opening one shows the delivery headers, the signature scheme and the example body.
      const testEvent = webhooks.locator('.opblock', { has: page.locator('[data-path="webhook.test_event"]') });
      await testEvent.locator('.opblock-summary-control').click();
      await testEvent.locator('.parameters').waitFor();
      const parameterNames = await testEvent.locator('.parameters .parameter__name').allInnerTexts();
      expect(parameterNames.map((n) => n.replace(/\s+|\*|required/g, ''))).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature', 'x-trace-id', 'user-agent']);
      expect(await testEvent.locator('.opblock-description-wrapper').first().innerText()).toContain('HMAC-SHA256');
      expect(await testEvent.locator('.highlight-code').first().innerText()).toContain('"eventType": "webhook.test_event"');

      // The page's own info block renders the receiving guide too.
      expect(await page.locator('.information-container').innerText()).toContain('Receiving webhooks');

      const screenshot = process.env.REFERENCE_UI_SCREENSHOT;
      if (screenshot) await page.screenshot({ path: screenshot, fullPage: true });

      // Nothing left this host: every request went to the API's loopback address.
      const offHost = requested.filter((u) => !/^(data|blob):/.test(u) && !LOOPBACK.has(new URL(u).hostname));
      expect(offHost).toEqual([]);
      expect(requested).toEqual(expect.arrayContaining([`${api!.apiUrl}/openapi.json`, `${api!.apiUrl}/reference/swagger-ui-bundle.js`]));
      expect(failures).toEqual([]);
      await page.close();
    },
    60_000,
  );
});
