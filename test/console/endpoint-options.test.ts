/**
 * The endpoint page's delivery options (docs/behaviour.md#custom-headers and the sections after
 * it) in Chromium on the real local stack with a real loopback receiver: stored options shown
 * with a secret header's value never in the page, the filter's live test against a payload
 * (match, no match with its reason, a refusal next to the field), the read-only view of a read
 * token (names only, no edit controls), the request headers an attempt sent, and each section
 * saving with one PATCH of only its field (a header added, a secret one never seen again, OAuth
 * 2.0, a rate, a filter, a refused header named on its row). Screenshots of the options at 1280
 * and 390 px and of an attempt's request headers; every page scanned with axe.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page, Request } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { planHeaderChange, sealHeaderPlan } from '../../lambdas/domain/endpoint-options';
import { issueToken } from '../../lambdas/operations/admin';
import { hasChromium, launchChromium, NO_CHROMIUM_REASON, saveScreenshot, seriousAxeFindings, type TestBrowser } from '../helpers/browser';
import { usePipelineApi } from '../helpers/local-api';
import { seedEndpoint, testSealer } from '../helpers/pipeline';

/** Values the page must never hold: a secret header's and an OAuth 2.0 client secret. */
const API_KEY = 'k_live_console_5f9a1c';
const NEW_KEY = 'k_live_console_replaced_77b2';
const CLIENT_SECRET = 'cs_console_0d4e8b';
const TENANT = 'tenant-7731';
const FILTER = { 'data.order.warehouse': { $in: ['ams-1', 'fra-1'] } };

/** Where screenshots go (as test/helpers/browser.ts's saveScreenshot): `npm run screenshots` sets docs/images/console. */
function screenshotPath(name: string): string {
  const dir = process.env.CONSOLE_SCREENSHOTS ?? join(process.cwd(), 'test-results', 'screenshots');
  mkdirSync(dir, { recursive: true });
  return join(dir, `${name}.png`);
}

describe.skipIf(!hasChromium)(`the endpoint page's delivery options${NO_CHROMIUM_REASON}`, () => {
  const pipeline = usePipelineApi();
  let browser: TestBrowser;
  let page: Page;
  const pageErrors: string[] = [];
  /** Every PATCH the console sent, as JSON. */
  const patches: Record<string, unknown>[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('request', (r: Request) => {
      if (r.method() === 'PATCH') patches.push(r.postDataJSON() as Record<string, unknown>);
    });
  });

  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail' && page)
      await saveScreenshot(page, `failed-${ctx.task.name.slice(0, 40).replace(/\W+/g, '-')}`).catch(() => undefined);
  });

  afterAll(async () => {
    await browser?.close();
    expect(pageErrors).toEqual([]);
  });

  const ws = () => `/workspaces/${pipeline.api.workspace}`;

  async function signIn(p: Page, token = pipeline.api.token): Promise<void> {
    await p.goto(`${pipeline.api.apiUrl}/console`);
    const signOut = p.getByRole('button', { name: 'Sign out' });
    await p.getByRole('textbox', { name: 'Workspace' }).or(signOut).waitFor();
    if (await signOut.isVisible()) return;
    await p.getByRole('textbox', { name: 'Workspace' }).fill(pipeline.api.workspace);
    await p.getByLabel('API token').fill(token);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await signOut.waitFor();
  }

  async function openEndpoint(p: Page, endpointId: string): Promise<void> {
    await p.goto(`${pipeline.api.apiUrl}/console#/endpoints/${endpointId}?section=options`);
    await p.getByRole('heading', { name: 'Delivery options' }).waitFor();
  }

  /** A section of the options by its heading. */
  const section = (p: Page, name: string): Locator =>
    p.locator('section.option-section').filter({ has: p.getByRole('heading', { name, exact: true }) });

  /** An endpoint stored with a plain and a secret header, a rate and a filter (as the API would store them). */
  const seededIds: string[] = [];
  afterEach(async () => {
    // Each test's endpoints go with it, so a later event reaches only the next test's.
    for (const id of seededIds.splice(0)) await pipeline.api.call('DELETE', `${ws()}/webhooks/${id}`);
  });

  async function seeded(url: string): Promise<string> {
    const headers = await sealHeaderPlan(planHeaderChange(undefined, { 'X-Tenant': TENANT, 'X-Api-Key': API_KEY }, false), testSealer);
    const record = await seedEndpoint(pipeline.api.table, {
      workspace: pipeline.api.workspace,
      url,
      eventTypes: ['order.shipped'],
      options: { ...(headers ? { headers } : {}), rateLimitPerSecond: 5, filter: FILTER },
    });
    seededIds.push(record.endpointId);
    return record.endpointId;
  }

  async function noSecretInPage(p: Page): Promise<void> {
    const html = await p.content();
    for (const secret of [API_KEY, NEW_KEY, CLIENT_SECRET]) expect(html, secret).not.toContain(secret);
  }

  it('shows the stored options, a secret header as "Set — hidden" whose value is never in the page', { timeout: 60_000 }, async () => {
    const receiver = await pipeline.receiver((_req, res) => res.end('ok'));
    const endpointId = await seeded(receiver.url);
    await signIn(page);
    await openEndpoint(page, endpointId);

    const headers = section(page, 'Custom headers');
    await headers.getByRole('listitem').filter({ hasText: 'X-Tenant' }).waitFor();
    const keyRow = headers.getByRole('listitem').filter({ hasText: 'X-Api-Key' });
    expect(await keyRow.textContent()).toContain('Set — hidden');
    expect(await page.getByRole('spinbutton', { name: 'Requests per second' }).inputValue()).toBe('5');
    expect(JSON.parse(await page.getByRole('textbox', { name: 'Filter (JSON)' }).inputValue())).toEqual(FILTER);
    expect(await page.getByRole('combobox', { name: 'Authentication' }).inputValue()).toBe('none');
    await section(page, 'Authentication').getByText('No authentication').waitFor();

    // "Replace" opens an empty field: nothing stored is put in the page.
    await keyRow.getByRole('button', { name: 'Replace value of X-Api-Key' }).click();
    const replacement = page.getByRole('textbox', { name: 'New value of X-Api-Key' });
    expect(await replacement.inputValue()).toBe('');
    expect(await page.evaluate<boolean>('document.activeElement?.id?.includes("value-X-Api-Key") ?? false')).toBe(true);
    await keyRow.getByRole('button', { name: 'Keep value' }).click();
    await noSecretInPage(page);

    // Keyboard: "Add header" by Enter puts the focus in the new row's name.
    await headers.getByRole('button', { name: 'Add header' }).focus();
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.evaluate<string | null>('document.activeElement?.closest("label, li")?.textContent ?? null'))
      .toContain('Header name');
    await headers.getByRole('button', { name: 'Discard new header' }).click();

    // The shot shows a test's answer too.
    await page.getByRole('textbox', { name: 'Sample payload' }).fill('{"data": {"order": {"id": "o-1002", "warehouse": "ber-1"}}}');
    await page.getByRole('button', { name: 'Test filter' }).click();
    await section(page, 'Payload filter').locator('.filter-result').getByText('Does not match').waitFor();
    expect(await seriousAxeFindings(page), 'axe on the options').toEqual([]);
    await page.locator('section[aria-labelledby="endpoint-options-title"]').screenshot({ path: screenshotPath('endpoint-options') });
  });

  it(
    'tests the filter against a payload: matches, does not match with the reason, and refusals next to the field',
    { timeout: 60_000 },
    async () => {
      const receiver = await pipeline.receiver((_req, res) => res.end('ok'));
      const endpointId = await seeded(receiver.url);
      await signIn(page);
      await openEndpoint(page, endpointId);
      const filter = section(page, 'Payload filter');
      const result = filter.locator('.filter-result');

      await page.getByRole('textbox', { name: 'Sample payload' }).fill(JSON.stringify({ data: { order: { warehouse: 'ams-1' } } }));
      await page.getByRole('button', { name: 'Test filter' }).click();
      await expect.poll(() => result.textContent()).toBe('Matches');

      // Live: a changed payload is tested again without a click.
      await page.getByRole('textbox', { name: 'Sample payload' }).fill(JSON.stringify({ data: { order: { warehouse: 'ber-1' } } }));
      await expect.poll(() => result.textContent()).toBe('Does not match: data.order.warehouse is "ber-1", not one of ["ams-1", "fra-1"]');

      // The filter being written is what is tested, not the stored one.
      await page.getByRole('textbox', { name: 'Filter (JSON)' }).fill(JSON.stringify({ 'data.order.warehouse': { $prefix: 'be' } }));
      await expect.poll(() => result.textContent()).toBe('Matches');

      // Not JSON: said next to the field, and nothing asked of the API.
      const filterBox = page.getByRole('textbox', { name: 'Filter (JSON)' });
      await filterBox.fill('{"data.order.warehouse": ');
      await expect.poll(() => filterBox.getAttribute('aria-invalid')).toBe('true');
      expect(await filter.locator('.field-error').first().textContent()).toContain('The filter is not valid JSON');

      // The API's refusal of an unknown operator, next to the field, naming its place.
      await filterBox.fill(JSON.stringify({ 'data.order.warehouse': { $regex: '^b' } }));
      await expect.poll(() => filter.locator('.field-error').first().textContent()).toContain('$regex');
      expect(await filterBox.getAttribute('aria-invalid')).toBe('true');
      const describedBy = (await filterBox.getAttribute('aria-describedby'))!.split(' ');
      expect(await page.locator(`[id="${describedBy[0]}"]`).textContent()).toContain('$regex');

      expect(await seriousAxeFindings(page), 'axe on the filter test').toEqual([]);
    },
  );

  it('shows a read token the names only, without a value or an edit control', { timeout: 60_000 }, async () => {
    const receiver = await pipeline.receiver((_req, res) => res.end('ok'));
    const endpointId = await seeded(receiver.url);
    const { token } = await issueToken(pipeline.api.table, pipeline.api.workspace, { name: 'read-only viewer', scopes: ['read'] });
    // A new tab has its own sessionStorage: signed out until it signs in with the read token.
    const p = await browser.context.newPage();
    try {
      await signIn(p, token);
      await openEndpoint(p, endpointId);
      const headers = section(p, 'Custom headers');
      for (const name of ['X-Api-Key', 'X-Tenant']) await headers.getByRole('listitem').filter({ hasText: name }).waitFor();
      const text = (await p.locator('section[aria-labelledby="endpoint-options-title"]').textContent())!;
      expect(text).not.toContain(TENANT);
      expect(text).not.toContain('<redacted>');
      await noSecretInPage(p);
      for (const name of ['Add header', 'Save headers', 'Save authentication', 'Save rate', 'Save filter', 'Remove filter'])
        expect(await p.getByRole('button', { name }).count(), name).toBe(0);
      for (const name of ['Header name', 'Header value', 'Filter (JSON)', 'Token URL'])
        expect(await p.getByRole('textbox', { name }).count(), name).toBe(0);
      expect(await p.getByRole('spinbutton', { name: 'Requests per second' }).count()).toBe(0);
      expect(await section(p, 'Delivery rate').textContent()).toContain('At most 5 requests a second');
      // The filter's test is a read: offered with the stored filter.
      await p.getByRole('textbox', { name: 'Sample payload' }).fill('{"data": {"order": {"warehouse": "fra-1"}}}');
      await p.getByRole('button', { name: 'Test filter' }).click();
      await expect.poll(() => section(p, 'Payload filter').locator('.filter-result').textContent()).toBe('Matches');
      expect(await seriousAxeFindings(p), 'axe on the read-only options').toEqual([]);
    } finally {
      await p.close();
    }
  });

  it('shows the request headers an attempt sent: custom ones too, a secret one as recorded, <redacted>', { timeout: 60_000 }, async () => {
    const receiver = await pipeline.receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    await seeded(receiver.url);
    const published = await fetch(`${pipeline.api.apiUrl}/local/events`, {
      method: 'POST',
      body: JSON.stringify({
        workspace: pipeline.api.workspace,
        type: 'order.shipped',
        payload: { orderId: 'h-1', data: { order: { warehouse: 'ams-1' } } },
      }),
    });
    expect(published.status).toBe(202);
    const [deliveryId] = ((await published.json()) as { deliveryIds: string[] }).deliveryIds;
    await expect
      .poll(async () => (await pipeline.api.call('GET', `${ws()}/webhooks/deliveries/${deliveryId}`)).body.status, { timeout: 20_000 })
      .toBe('delivered');
    // The receiver got the real value; the evidence keeps only the name.
    expect(receiver.seen[0]!.headers['x-api-key']).toBe(API_KEY);

    await signIn(page);
    await page.goto(`${pipeline.api.apiUrl}/console#/deliveries/${deliveryId}`);
    const attempts = page.getByRole('region', { name: 'Attempts' });
    await attempts.getByRole('button', { name: 'Attempt 1' }).click();
    await attempts.getByRole('heading', { name: 'Request headers' }).waitFor();
    const table = attempts.getByRole('table', { name: 'Request headers of attempt 1' });
    const row = (name: string) => table.getByRole('row').filter({ has: page.getByRole('cell', { name: new RegExp(`^${name}$`, 'i') }) });
    expect(await row('x-tenant').getByRole('cell').nth(1).textContent()).toBe(TENANT);
    expect(await row('x-api-key').getByRole('cell').nth(1).textContent()).toBe('<redacted>');
    await row('webhook-signature').waitFor();
    await noSecretInPage(page);
    expect(await seriousAxeFindings(page), 'axe on the delivery').toEqual([]);
    await attempts.screenshot({ path: screenshotPath('delivery-request-headers') });
  });

  it('asks for the secrets again when the URL moves to another host, in the same save', { timeout: 60_000 }, async () => {
    const receiver = await pipeline.receiver((_req, res) => res.end('ok'));
    const endpointId = await seeded(receiver.url);
    await signIn(page);
    await openEndpoint(page, endpointId);
    const settings = page.locator('section[aria-labelledby="endpoint-settings-title"]');
    const url = settings.getByRole('textbox', { name: 'URL' });
    const secrets = settings.getByRole('group', { name: 'Secrets for the new host' });

    // Same host, another path: nothing to give again.
    await url.fill(`${receiver.url}/v2`);
    expect(await secrets.count()).toBe(0);

    const moved = `http://127.0.0.1:${receiver.port === 9 ? 10 : 9}/hook`;
    await url.fill(moved);
    const value = secrets.getByRole('textbox', { name: 'New value of X-Api-Key' });
    expect(await value.inputValue()).toBe('');
    await value.fill(NEW_KEY);
    patches.splice(0);
    await settings.getByRole('button', { name: 'Save changes' }).click();
    await settings.getByRole('status').filter({ hasText: 'Changes saved' }).waitFor();
    expect(patches.splice(0)).toEqual([{ url: moved, headers: { 'X-Api-Key': NEW_KEY } }]);
    // Saved: the fields are gone with the value typed in them, and the header is still there.
    expect(await secrets.count()).toBe(0);
    expect(Object.keys((await pipeline.api.call('GET', `${ws()}/webhooks/${endpointId}`)).body.headers).sort()).toEqual([
      'X-Api-Key',
      'X-Tenant',
    ]);
    await noSecretInPage(page);
  });

  it('fits a 390 px wide screen', { timeout: 60_000 }, async () => {
    const receiver = await pipeline.receiver((_req, res) => res.end('ok'));
    const endpointId = await seeded(receiver.url);
    const phone = await launchChromium({ width: 390, height: 844 });
    try {
      const p = await phone.context.newPage();
      await signIn(p);
      await openEndpoint(p, endpointId);
      await section(p, 'Custom headers').getByRole('button', { name: 'Add header' }).click();
      await section(p, 'Custom headers').getByText('X-Tenant').waitFor();
      expect(await p.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      expect(await seriousAxeFindings(p), 'axe at 390 px').toEqual([]);
      await p.locator('section[aria-labelledby="endpoint-options-title"]').screenshot({ path: screenshotPath('endpoint-options-390') });
    } finally {
      await phone.close();
    }
  });

  describe('saving, one PATCH of only the section’s field each', () => {
    let endpointId = '';
    const sent = () => patches.splice(0);

    beforeAll(async () => {
      const receiver = await pipeline.receiver((_req, res) => res.end('ok'));
      pipeline.stops.splice(0);
      const created = await pipeline.api.call('POST', `${ws()}/webhooks`, {
        body: { url: receiver.url, eventTypes: ['order.shipped'], description: 'Options receiver' },
      });
      expect(created.status, created.text).toBe(201);
      endpointId = created.body.endpointId as string;
    });

    it('adds a header and lists it; a secret one is never seen again; a refused one is named on its row', { timeout: 60_000 }, async () => {
      await signIn(page);
      await openEndpoint(page, endpointId);
      const headers = section(page, 'Custom headers');
      await headers.getByText('No custom headers').waitFor();
      sent();

      await headers.getByRole('button', { name: 'Add header' }).click();
      await headers.getByRole('textbox', { name: 'Header name' }).fill('X-Tenant');
      await headers.getByRole('textbox', { name: 'Header value' }).fill(TENANT);
      await headers.getByRole('button', { name: 'Save headers' }).click();
      await headers.getByRole('status').filter({ hasText: 'Headers saved' }).waitFor();
      expect(sent()).toEqual([{ headers: { 'X-Tenant': TENANT } }]);
      await expect.poll(() => headers.getByRole('listitem').filter({ hasText: 'X-Tenant' }).textContent()).toContain(TENANT);

      await headers.getByRole('button', { name: 'Add header' }).click();
      await headers.getByRole('textbox', { name: 'Header name' }).fill('X-Api-Key');
      await headers.getByRole('textbox', { name: 'Header value' }).fill(API_KEY);
      await headers.getByRole('button', { name: 'Save headers' }).click();
      const keyRow = headers.getByRole('listitem').filter({ hasText: 'X-Api-Key' });
      await keyRow.getByText('Set — hidden').waitFor();
      expect(sent()).toEqual([{ headers: { 'X-Api-Key': API_KEY } }]);
      await noSecretInPage(page);

      // After a reload too: the value is never read back.
      await page.reload();
      await keyRow.getByText('Set — hidden').waitFor();
      await noSecretInPage(page);

      // Replaced: still hidden.
      await keyRow.getByRole('button', { name: 'Replace value of X-Api-Key' }).click();
      await page.getByRole('textbox', { name: 'New value of X-Api-Key' }).fill(NEW_KEY);
      await headers.getByRole('button', { name: 'Save headers' }).click();
      await headers.getByRole('status').filter({ hasText: 'Headers saved' }).waitFor();
      expect(sent()).toEqual([{ headers: { 'X-Api-Key': NEW_KEY } }]);
      await keyRow.getByText('Set — hidden').waitFor();
      await noSecretInPage(page);

      // A name the service sets: refused by the API, said on the row that holds it.
      await headers.getByRole('button', { name: 'Add header' }).click();
      await headers.getByRole('textbox', { name: 'Header name' }).fill('Content-Type');
      await headers.getByRole('textbox', { name: 'Header value' }).fill('text/plain');
      await headers.getByRole('button', { name: 'Save headers' }).click();
      const refusedRow = headers.getByRole('listitem').filter({ has: page.getByRole('textbox', { name: 'Header name' }) });
      await expect.poll(() => refusedRow.locator('.field-error').textContent()).toContain('Content-Type');
      expect(await headers.getByRole('textbox', { name: 'Header name' }).getAttribute('aria-invalid')).toBe('true');
      await headers.getByRole('button', { name: 'Discard new header Content-Type' }).click();

      // Removed: gone after the save.
      await headers.getByRole('button', { name: 'Remove header X-Tenant' }).click();
      await headers.getByRole('button', { name: 'Save headers' }).click();
      await headers.getByRole('status').filter({ hasText: 'Headers saved' }).waitFor();
      expect(sent().at(-1)).toEqual({ headers: { 'X-Tenant': null } });
      await expect.poll(() => headers.getByRole('listitem').filter({ hasText: 'X-Tenant' }).count()).toBe(0);
      expect((await pipeline.api.call('GET', `${ws()}/webhooks/${endpointId}`)).body.headers).toEqual({ 'X-Api-Key': '<redacted>' });
    });

    it('sets OAuth 2.0 with a client secret that is never shown, then keeps it when left empty', { timeout: 60_000 }, async () => {
      await signIn(page);
      await openEndpoint(page, endpointId);
      const auth = section(page, 'Authentication');
      sent();
      await page.getByRole('combobox', { name: 'Authentication' }).selectOption({ label: 'OAuth 2.0 client credentials' });
      const tokenUrl = 'http://127.0.0.1:9/oauth/token';
      await page.getByRole('textbox', { name: 'Token URL' }).fill(tokenUrl);
      await page.getByRole('textbox', { name: 'Client ID' }).fill('webhooks-sender');
      await page.getByRole('textbox', { name: 'Client secret' }).fill(CLIENT_SECRET);
      await page.getByRole('textbox', { name: 'Scope' }).fill('webhooks:receive');
      await auth.getByRole('button', { name: 'Save authentication' }).click();
      await auth.getByRole('status').filter({ hasText: 'Authentication saved' }).waitFor();
      expect(sent()).toEqual([
        {
          auth: {
            type: 'oauth2_client_credentials',
            tokenUrl,
            clientId: 'webhooks-sender',
            clientSecret: CLIENT_SECRET,
            scope: 'webhooks:receive',
          },
        },
      ]);
      // The field is emptied, and says what empty means now.
      expect(await page.getByRole('textbox', { name: 'Client secret' }).inputValue()).toBe('');
      await auth.getByText('Leave empty to keep the stored secret').waitFor();
      await noSecretInPage(page);

      await page.reload();
      expect(await page.getByRole('textbox', { name: 'Client ID' }).inputValue()).toBe('webhooks-sender');
      expect(await page.getByRole('textbox', { name: 'Client secret' }).inputValue()).toBe('');
      await page.getByRole('textbox', { name: 'Audience' }).fill('https://receiver.example');
      await auth.getByRole('button', { name: 'Save authentication' }).click();
      await auth.getByRole('status').filter({ hasText: 'Authentication saved' }).waitFor();
      expect(sent()).toEqual([
        {
          auth: {
            type: 'oauth2_client_credentials',
            tokenUrl,
            clientId: 'webhooks-sender',
            scope: 'webhooks:receive',
            audience: 'https://receiver.example',
          },
        },
      ]);
      await noSecretInPage(page);
      expect(await seriousAxeFindings(page), 'axe on OAuth 2.0').toEqual([]);
    });

    it('sets a rate, and refuses one out of range next to the field', { timeout: 60_000 }, async () => {
      await signIn(page);
      await openEndpoint(page, endpointId);
      const rate = section(page, 'Delivery rate');
      const field = page.getByRole('spinbutton', { name: 'Requests per second' });
      sent();
      await field.fill('5000');
      await rate.getByRole('button', { name: 'Save rate' }).click();
      await expect.poll(() => field.getAttribute('aria-invalid')).toBe('true');
      expect(await rate.locator('.field-error').textContent()).toContain('from 1 to 1000');
      expect(sent()).toEqual([]);
      // Enter in the field saves, as the button does.
      await field.fill('5');
      await field.press('Enter');
      await rate.getByRole('status').filter({ hasText: 'Rate saved' }).waitFor();
      expect(sent()).toEqual([{ rateLimitPerSecond: 5 }]);
      expect((await pipeline.api.call('GET', `${ws()}/webhooks/${endpointId}`)).body.rateLimitPerSecond).toBe(5);
      await field.fill('');
      await rate.getByRole('button', { name: 'Save rate' }).click();
      await rate.getByRole('status').filter({ hasText: 'no limit' }).waitFor();
      expect(sent()).toEqual([{ rateLimitPerSecond: null }]);
    });

    it('saves a filter, refuses an invalid one next to the field, and removes it', { timeout: 60_000 }, async () => {
      await signIn(page);
      await openEndpoint(page, endpointId);
      const filter = section(page, 'Payload filter');
      const box = page.getByRole('textbox', { name: 'Filter (JSON)' });
      sent();
      await box.fill(JSON.stringify({ 'data.order.total': { $gte: 'many' } }));
      await filter.getByRole('button', { name: 'Save filter' }).click();
      await expect.poll(() => box.getAttribute('aria-invalid')).toBe('true');
      expect(await filter.locator('.field-error').first().textContent()).toContain('data.order.total');
      await box.fill(JSON.stringify(FILTER));
      await filter.getByRole('button', { name: 'Save filter' }).click();
      await filter.getByRole('status').filter({ hasText: 'Filter saved' }).waitFor();
      expect(sent()).toEqual([{ filter: { 'data.order.total': { $gte: 'many' } } }, { filter: FILTER }]);
      expect((await pipeline.api.call('GET', `${ws()}/webhooks/${endpointId}`)).body.filter).toEqual(FILTER);
      await filter.getByRole('button', { name: 'Remove filter' }).click();
      await filter.getByText('No filter').waitFor();
      expect(sent()).toEqual([{ filter: null }]);
    });

    it('creates an endpoint with a header, a rate and a filter from "More options"', { timeout: 60_000 }, async () => {
      await signIn(page);
      await page.goto(`${pipeline.api.apiUrl}/console#/endpoints/new`);
      await page.getByRole('heading', { level: 1, name: 'New endpoint' }).waitFor();
      await page.getByRole('textbox', { name: 'URL' }).fill('http://127.0.0.1:9/more-options');
      await page.getByRole('checkbox', { name: 'order.shipped' }).check();
      await page.getByText('More options').click();
      await page.getByRole('button', { name: 'Add header' }).click();
      await page.getByRole('textbox', { name: 'Header name' }).fill('X-Tenant');
      await page.getByRole('textbox', { name: 'Header value' }).fill(TENANT);
      await page.getByRole('spinbutton', { name: 'Requests per second' }).fill('20');
      await page.getByRole('textbox', { name: 'Filter (JSON)' }).fill(JSON.stringify(FILTER));
      expect(await seriousAxeFindings(page), 'axe on more options').toEqual([]);
      const posted = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith(`${ws()}/webhooks`));
      await page.getByRole('button', { name: 'Create endpoint' }).click();
      expect((await posted).postDataJSON()).toMatchObject({ headers: { 'X-Tenant': TENANT }, rateLimitPerSecond: 20, filter: FILTER });
      await page.getByRole('heading', { name: 'Delivery options' }).waitFor();
      await expect
        .poll(() => section(page, 'Custom headers').getByRole('listitem').filter({ hasText: 'X-Tenant' }).textContent())
        .toContain(TENANT);
      expect(await page.getByRole('spinbutton', { name: 'Requests per second' }).inputValue()).toBe('20');
    });
  });
});
