/**
 * The platform's whole journey (docs/behaviour.md#the-embedded-console), in Chromium against the
 * real local stack and nothing else: the platform's page, on one loopback origin, asks its tiny
 * backend for a link; the backend provisions the customer's workspace and mints a token for it
 * through the platform API (SigV4-signed with the stack's allowed key pair, as the AWS SDK signs
 * on AWS), then a portal link through the platform API as well; the page frames the link, and a
 * person creates an endpoint, sends a test event and reads its delivery, by role and accessible
 * name, with axe clean in embedded mode. Around it: another origin's frame refused, a code used
 * twice refused, a read-only session without write controls and refused by the API, an
 * `eventTypes` session that cannot subscribe to other types, and a revoked session offering the
 * way back.
 */
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignatureV4 } from '@smithy/signature-v4';
import type { Frame, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { scriptedReceiver } from '../helpers/scripted-receiver';
import { hasChromium, launchChromium, NO_CHROMIUM_REASON, saveScreenshot, seriousAxeFindings, type TestBrowser } from '../helpers/browser';

/** SHA-256 and HMAC-SHA-256 as the signer takes them (what `@smithy/hash-node` gives in Node). */
type SourceData = string | ArrayBuffer | ArrayBufferView;
const bytes = (data: SourceData): string | Uint8Array =>
  typeof data === 'string'
    ? data
    : data instanceof ArrayBuffer
      ? new Uint8Array(data)
      : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
class Sha256 {
  private readonly hash;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: Uint8Array): void {
    this.hash.update(data);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}

/** The workspace the platform provisions for its customer. */
const CUSTOMER = 'globex';

interface Served {
  readonly origin: string;
  close(): Promise<void>;
}

async function serve(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>): Promise<Served> {
  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(e));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}

/** The platform's settings page: its script asks the backend for a link, then frames it. */
const SETTINGS_PAGE = (query: string) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Globex on Acme Cloud: webhooks</title>
<style>body{margin:0;font:15px system-ui,sans-serif}main{padding:16px}iframe{width:100%;height:760px;border:1px solid #c9ced6}</style></head>
<body><main><h1>Settings · Webhooks</h1>
<iframe title="Webhooks" allow="clipboard-write" referrerpolicy="no-referrer"
  sandbox="allow-scripts allow-same-origin allow-forms allow-top-navigation-by-user-activation"></iframe></main>
<script>
fetch('/backend/webhooks-link${query}').then((r) => r.json()).then((link) => { document.querySelector('iframe').src = link.url; });
</script></body></html>`;

/** A page that frames `src` as it is. */
const FRAMING_PAGE = (src: string) =>
  `<!doctype html><html lang="en"><title>Framing</title><h1>Framing</h1><iframe title="Webhooks" src="${src.replaceAll('"', '&quot;')}"></iframe></html>`;

describe.skipIf(!hasChromium)(`the platform's journey: a framed portal session${NO_CHROMIUM_REASON}`, () => {
  let api: TestApi;
  let platform: Served;
  let other: Served;
  let receiver: Awaited<ReturnType<typeof scriptedReceiver>>;
  let browser: TestBrowser;
  let workspaceToken = '';
  const pages: Page[] = [];
  /** Every session the backend minted, newest last. */
  const minted: { sessionId: string; url: string }[] = [];

  /** A platform API call, signed with the stack's allowed key pair. */
  async function platformCall(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const { accessKeyId, secretAccessKey, region } = api.platform.platformCredentials;
    const url = new URL(path, api.apiUrl);
    const text = body === undefined ? undefined : JSON.stringify(body);
    const signer = new SignatureV4({ service: 'execute-api', region, credentials: { accessKeyId, secretAccessKey }, sha256: Sha256 });
    const signed = await signer.sign({
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      headers: { host: url.host, ...(text ? { 'content-type': 'application/json' } : {}) },
      ...(text ? { body: text } : {}),
    });
    const { host: _host, ...headers } = signed.headers;
    const res = await fetch(url, { method, headers, ...(text ? { body: text } : {}) });
    const answer = await res.text();
    return { status: res.status, body: answer ? (JSON.parse(answer) as unknown) : undefined };
  }

  /** The backend's part: the customer's workspace and token once, then a portal session per page view. */
  async function mintLink(options: Record<string, unknown>): Promise<{ sessionId: string; url: string }> {
    if (!workspaceToken) {
      const created = await platformCall('POST', '/platform/workspaces', {
        slug: CUSTOMER,
        name: 'Globex',
        owner: { email: 'it@globex.test' },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const token = await platformCall('POST', `/platform/workspaces/${CUSTOMER}/api-tokens`, { name: 'acme backend', scopes: ['admin'] });
      expect(token.status, JSON.stringify(token.body)).toBe(201);
      workspaceToken = token.body.token as string;
      const branding = await api.call('PUT', `/workspaces/${CUSTOMER}/branding`, {
        token: workspaceToken,
        body: { displayName: 'Globex Corporation', accentColor: '#6b2fb3' },
      });
      expect(branding.status, branding.text).toBe(200);
    }
    // The link itself through the signed platform API, as a platform's backend mints one per page view.
    const res = await platformCall('POST', `/platform/workspaces/${CUSTOMER}/portal-sessions`, {
      expiresIn: 3600,
      returnUrl: `${platform.origin}/settings/webhooks`,
      ...options,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const link = { sessionId: res.body.sessionId as string, url: res.body.url as string };
    minted.push(link);
    return link;
  }

  beforeAll(async () => {
    platform = await serve(async (req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/backend/webhooks-link') {
        const link = await mintLink({
          ...(url.searchParams.get('readOnly') === 'true' ? { readOnly: true } : {}),
          ...(url.searchParams.get('eventTypes') ? { eventTypes: url.searchParams.get('eventTypes')!.split(',') } : {}),
        });
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(JSON.stringify(link));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(url.pathname === '/frame' ? FRAMING_PAGE(url.searchParams.get('src') ?? '') : SETTINGS_PAGE(url.search));
    });
    other = await serve(async (req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(FRAMING_PAGE(new URL(req.url ?? '/', 'http://x').searchParams.get('src') ?? ''));
    });
    api = await startTestApi({
      schedules: false,
      timeScale: 1000,
      onPipelineError: () => undefined,
      consoleFrameAncestors: [platform.origin],
    });
    receiver = await scriptedReceiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    browser = await launchChromium();
  });

  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail')
      for (const p of pages)
        await saveScreenshot(p, `failed-journey-${ctx.task.name.slice(0, 40).replace(/\W+/g, '-')}`).catch(() => undefined);
    await Promise.all(pages.splice(0).map((p) => p.close().catch(() => undefined)));
  });

  afterAll(async () => {
    await browser?.close();
    await receiver?.stop();
    await platform?.close();
    await other?.close();
    await api?.close();
  });

  async function openSettings(query = ''): Promise<{ page: Page; frame: ReturnType<Page['frameLocator']> }> {
    const page = await browser.context.newPage();
    pages.push(page);
    await page.goto(`${platform.origin}/settings${query}`);
    return { page, frame: page.frameLocator('iframe[title="Webhooks"]') };
  }

  const consoleFrame = (page: Page): Frame => page.frames().find((f) => f !== page.mainFrame())!;
  const nav = (frame: ReturnType<Page['frameLocator']>, name: string) =>
    frame.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true });

  it("lets a person create an endpoint, send a test event and read its delivery inside the platform's page", async () => {
    const { page, frame } = await openSettings();
    await nav(frame, 'Endpoints').click();
    expect(await frame.getByRole('banner').textContent()).toContain('Globex Corporation');
    expect(await frame.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
    await frame.getByRole('button', { name: 'New endpoint' }).click();
    await frame.getByRole('textbox', { name: 'URL' }).fill(receiver.url);
    await frame.getByRole('checkbox', { name: 'webhook.test_event' }).check();
    await frame.getByRole('textbox', { name: 'Description' }).fill('Globex orders receiver');
    await frame.getByRole('button', { name: 'Create endpoint' }).click();
    await frame.getByRole('button', { name: 'Send test event' }).click();
    const sent = frame.locator('.success').filter({ hasText: 'Test event queued' });
    await expect.poll(() => sent.textContent(), { timeout: 15_000 }).toContain('Delivered');
    await sent.getByRole('link', { name: /^whd_/ }).click();
    const attempts = frame.getByRole('region', { name: 'Attempts' });
    await expect.poll(() => attempts.textContent(), { timeout: 15_000 }).toContain('200');
    expect(receiver.seen.length).toBe(1);
    expect(await seriousAxeFindings(consoleFrame(page) as unknown as Page)).toEqual([]);
    // The change is the session's, in the workspace's own log.
    const audit = await api.call('GET', `/workspaces/${CUSTOMER}/audit-events`, { token: workspaceToken });
    expect(JSON.stringify(audit.body)).toContain(minted.at(-1)!.sessionId);
  }, 90_000);

  it('refuses the code a second time and in a frame of another origin', async () => {
    const { url } = await mintLink({});
    const page = await browser.context.newPage();
    pages.push(page);
    await page.goto(`${other.origin}/?src=${encodeURIComponent(url)}`);
    await page.getByRole('heading', { name: 'Framing' }).waitFor();
    await expect.poll(() => consoleFrame(page).url()).toMatch(/^chrome-error:/);
    // The refused frame never traded the code: it opens once where it is allowed.
    const code = new URL(url).hash.replace(/^#portal=/, '');
    const first = await api.call('POST', '/portal-sessions/exchange', { token: null, body: { code } });
    expect(first.status).toBe(200);
    const again = await api.call('POST', '/portal-sessions/exchange', { token: null, body: { code } });
    expect(again.status).toBeGreaterThanOrEqual(400);
    expect(again.status).toBeLessThan(500);
    const allowed = await browser.context.newPage();
    pages.push(allowed);
    await allowed.goto(`${platform.origin}/frame?src=${encodeURIComponent(url)}`);
    await allowed
      .frameLocator('iframe[title="Webhooks"]')
      .getByRole('heading', { name: 'This link has expired or was already used' })
      .waitFor();
  });

  it('shows a read-only session no write control, and the API refuses its writes', async () => {
    const { page, frame } = await openSettings('?readOnly=true');
    await nav(frame, 'Endpoints').click();
    await frame.getByRole('table').getByText('Globex orders receiver').waitFor();
    expect(await frame.getByRole('button', { name: 'New endpoint' }).count()).toBe(0);
    await frame.getByRole('table').getByRole('link').first().click();
    await frame.getByRole('heading', { level: 2, name: 'Settings' }).waitFor();
    for (const name of ['Send test event', 'Rotate secret', 'Delete endpoint', 'Disable endpoint', 'Save changes'])
      expect(await frame.getByRole('button', { name }).count(), name).toBe(0);
    const token = await consoleFrame(page).evaluate<string>("JSON.parse(sessionStorage.getItem('webhooks-console-session')).token");
    expect(token).toMatch(/^whs_/);
    const refused = await api.call('POST', `/workspaces/${CUSTOMER}/webhooks`, {
      token,
      body: { url: receiver.url, eventTypes: ['webhook.test_event'] },
    });
    expect(refused.status).toBe(403);
  });

  it('offers an eventTypes session only its types, and the API refuses a subscription to another', async () => {
    const { page, frame } = await openSettings('?eventTypes=webhook.test_event');
    await nav(frame, 'Endpoints').click();
    await frame.getByRole('button', { name: 'New endpoint' }).click();
    await frame.getByRole('checkbox', { name: 'webhook.test_event' }).waitFor();
    expect(await frame.locator('input[name="eventTypes"]').count()).toBe(1);
    const token = await consoleFrame(page).evaluate<string>("JSON.parse(sessionStorage.getItem('webhooks-console-session')).token");
    const refused = await api.call('POST', `/workspaces/${CUSTOMER}/webhooks`, {
      token,
      body: { url: receiver.url, eventTypes: ['order.shipped'] },
    });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
  });

  it('offers the way back to the platform once the session is revoked', async () => {
    const { frame } = await openSettings();
    await nav(frame, 'Overview').waitFor();
    const { sessionId } = minted.at(-1)!;
    expect((await api.call('DELETE', `/workspaces/${CUSTOMER}/portal-sessions/${sessionId}`, { token: workspaceToken })).status).toBe(204);
    await nav(frame, 'Endpoints').click();
    await frame.getByRole('heading', { name: 'Your session has expired' }).waitFor();
    const back = frame.getByRole('link', { name: `Return to ${new URL(platform.origin).host}` });
    expect(await back.getAttribute('href')).toBe(`${platform.origin}/settings/webhooks`);
  });
});
