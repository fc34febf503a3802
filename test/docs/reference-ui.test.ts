/**
 * `/reference` as a person sees it: the real local stack serves the page, and
 * headless Chromium (Debian's, driven by playwright-core) renders it from
 * `/openapi.json` with no request leaving this host, under the page's
 * Content-Security-Policy, and an axe-core scan finds nothing serious in it.
 * `.ci/run` installs Chromium; elsewhere, without /usr/bin/chromium, the tests are skipped.
 *
 * The accessibility test saves `reference.png` (test/helpers/browser.ts says where).
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../lambdas/contract/operations';
import { deploymentCatalogue } from '../../lambdas/domain/configured-event-types';
import { REFERENCE_CSP } from '../../lambdas/http/docs';
import { hasChromium, launchChromium, NO_CHROMIUM_REASON, saveScreenshot, seriousAxeFindings, type TestBrowser } from '../helpers/browser';
import { startTestApi, type TestApi } from '../helpers/local-api';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

let api: TestApi | undefined;
let browser: TestBrowser | undefined;

beforeAll(async () => {
  if (!hasChromium) return;
  api = await startTestApi();
  browser = await launchChromium({ width: 1280, height: 900 });
});

afterAll(async () => {
  // Each step on its own, so a failure in one still closes the other.
  await browser?.close().catch(() => undefined);
  await api?.close().catch(() => undefined);
});

/** What went wrong on a page: failed requests, script errors, console errors and CSP violations. */
interface Watched {
  readonly page: Page;
  readonly requested: string[];
  readonly failures: string[];
}

/**
 * A new page that records every request and every failure. The listener for CSP violations
 * is added through the DevTools protocol, which the page's own policy does not govern.
 */
async function watchedPage(): Promise<Watched> {
  const page = await browser!.context.newPage();
  const requested: string[] = [];
  const failures: string[] = [];
  await page.addInitScript({
    content:
      "document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'}`));",
  });
  page.on('request', (r) => requested.push(r.url()));
  page.on('requestfailed', (r) => failures.push(`${r.url()}: ${r.failure()?.errorText ?? 'failed'}`));
  page.on('pageerror', (e) => failures.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') failures.push(`console: ${m.text()}`);
  });
  return { page, requested, failures };
}

/** Opens `/reference` and waits until Swagger UI has rendered the operations. */
async function openReference(page: Page) {
  const response = await page.goto(`${api!.apiUrl}/reference`, { waitUntil: 'load' });
  await page.locator('.opblock-tag-section .opblock').first().waitFor({ timeout: 20_000 });
  return response;
}

describe('the /reference page in a browser', () => {
  it.skipIf(!hasChromium)(
    `renders the operations and the webhooks from /openapi.json, with every asset from this host${NO_CHROMIUM_REASON}`,
    async () => {
      const { page, requested, failures } = await watchedPage();
      const response = await openReference(page);
      expect(response?.status()).toBe(200);

      // The operations, grouped by tag, each with its path and summary.
      const webhooksPath = page.locator('.opblock-tag-section .opblock-summary-path[data-path="/workspaces/{slug}/webhooks"]');
      await webhooksPath.first().waitFor({ timeout: 20_000 });
      await expect.poll(() => page.locator('.opblock-tag-section .opblock').count()).toBe(OPERATIONS.length);
      const summaries = await page.locator('.opblock-tag-section .opblock-summary-description').allInnerTexts();
      expect(summaries.sort()).toEqual(OPERATIONS.map((o) => o.summary).sort());
      for (const op of OPERATIONS) {
        expect(await page.locator(`.opblock-tag-section .opblock-summary-path[data-path="${op.path}"]`).first().isVisible(), op.path).toBe(
          true,
        );
      }

      // The webhooks section: one POST per catalogue type, configured ones included.
      const webhooks = page.locator('.webhooks');
      expect(await webhooks.locator('h2').innerText()).toBe('Webhooks');
      const names = deploymentCatalogue().types.map((t) => t.name);
      expect(await webhooks.locator('.opblock-summary-path').evaluateAll((els) => els.map((e) => e.getAttribute('data-path')))).toEqual(
        names,
      );

      // Opening one shows the delivery headers, the signature scheme and the example body.
      const testEvent = webhooks.locator('.opblock', { has: page.locator('[data-path="webhook.test_event"]') });
      await testEvent.locator('.opblock-summary-control').click();
      await testEvent.locator('.parameters').waitFor();
      const parameterNames = await testEvent.locator('.parameters .parameter__name').allInnerTexts();
      expect(parameterNames.map((n) => n.replace(/\s+|\*|required/g, ''))).toEqual([
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
        'x-trace-id',
        'user-agent',
      ]);
      expect(await testEvent.locator('.opblock-description-wrapper').first().innerText()).toContain('HMAC-SHA256');
      expect(await testEvent.locator('.highlight-code').first().innerText()).toContain('"eventType": "webhook.test_event"');

      // The page's own info block renders the receiving guide too.
      expect(await page.locator('.information-container').innerText()).toContain('Receiving webhooks');

      // Nothing left this host: every request went to the API's loopback address.
      const offHost = requested.filter((u) => !/^(data|blob):/.test(u) && !LOOPBACK.has(new URL(u).hostname));
      expect(offHost).toEqual([]);
      expect(requested).toEqual(expect.arrayContaining([`${api!.apiUrl}/openapi.json`, `${api!.apiUrl}/reference/swagger-ui-bundle.js`]));
      expect(failures).toEqual([]);
      await page.close();
    },
    60_000,
  );
  it.skipIf(!hasChromium)(
    `is served under a strict Content-Security-Policy that it keeps, and an axe-core scan finds nothing serious, collapsed, expanded or trying an operation out${NO_CHROMIUM_REASON}`,
    async () => {
      const { page, failures } = await watchedPage();
      const response = await openReference(page);
      const headers = response!.headers();
      expect(headers['content-security-policy']).toBe(REFERENCE_CSP);
      expect(REFERENCE_CSP).not.toContain('unsafe-');
      expect(REFERENCE_CSP).toContain("frame-ancestors 'none'");
      expect(headers).toMatchObject({ 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'x-frame-options': 'DENY' });
      const asset = await page.request.get(`${api!.apiUrl}/reference/reference-init.js`);
      expect(asset.headers()['content-security-policy']).toBe(REFERENCE_CSP);

      // Collapsed: the page as it opens.
      expect(await seriousAxeFindings(page), 'collapsed').toEqual([]);
      expect(await page.getByRole('combobox', { name: 'Servers' }).isVisible()).toBe(true);

      // One operation and one webhook expanded: parameters, request body, responses, examples.
      const create = page.locator('#operations-Webhooks-createWebhook');
      await create.locator('.opblock-summary-control').click();
      await create.locator('.responses-wrapper').waitFor();
      // The path is text in the summary button (no link in a button), and the deep link still reaches the address bar.
      expect(await create.locator('.opblock-summary-control a').count()).toBe(0);
      expect(new URL(page.url()).hash).toBe('#/Webhooks/createWebhook');
      const testEvent = page.locator('.webhooks .opblock', { has: page.locator('[data-path="webhook.test_event"]') });
      await testEvent.locator('.opblock-summary-control').click();
      await testEvent.locator('.parameters').waitFor();
      // And one schema expanded all the way down: constraint badges and keywords on nested backgrounds.
      const schema = page.locator('section.models article[data-json-schema-level="0"]', {
        has: page.locator('.json-schema-2020-12__title', { hasText: /^DeliveryAttempt$/ }),
      });
      await schema.locator('.json-schema-2020-12-expand-deep-button').first().click();
      await schema.locator('.json-schema-2020-12__constraint').first().waitFor();
      expect(await seriousAxeFindings(page), 'an operation, a webhook and a schema expanded').toEqual([]);
      await saveScreenshot(page, 'reference');

      // "Try it out", then Execute without a token: the request form, then the 401 with its curl command.
      await create.getByRole('button', { name: 'Try it out' }).click();
      await create.getByRole('textbox', { name: 'Request body' }).waitFor();
      await create.getByRole('textbox', { name: 'slug' }).fill('demo');
      await create.getByRole('button', { name: 'Execute' }).click();
      await create.locator('.live-responses-table tbody .response-col_status').first().waitFor();
      expect(await create.locator('.live-responses-table tbody .response-col_status').first().innerText()).toBe('401');
      expect(await seriousAxeFindings(page), 'trying an operation out').toEqual([]);

      // The authorization dialog.
      await page.locator('.auth-wrapper .btn.authorize').click();
      await page.getByRole('button', { name: 'Close' }).first().waitFor();
      expect(await seriousAxeFindings(page), 'the authorization dialog').toEqual([]);

      // The 401 is the only failure the browser reports: no CSP violation, no script error.
      expect(failures.filter((f) => !/status of 401/.test(f))).toEqual([]);
      await page.close();
    },
    180_000,
  );
});
