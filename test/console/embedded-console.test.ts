/**
 * The console inside the platform's product (docs/behaviour.md#the-embedded-console), in
 * Chromium: a parent page on another loopback origin frames `<console>/#portal=<code>`. The
 * stage lets that origin frame the console (`consoleFrameAncestors`) and no other; the console
 * trades the code once for a session, shows the workspace without sign-in or "Sign out", hides
 * every write control of a read-only session, offers only a session's event types, and when
 * the session ends says so with a way back to the platform.
 *
 * Everything runs against the real local stack and a real loopback receiver, behind a small
 * front that answers the exchange route itself (from codes the test hands out for tokens it
 * issued) and passes every other request through: so a session can last seconds (the API's
 * shortest is five minutes) or say `readOnly` over a token that may write, which shows the
 * console decides from the answer. embedded-journey.test.ts plays the same with the API's own
 * portal sessions.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Frame, FrameLocator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../../lambdas/operations/admin';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { scriptedReceiver } from '../helpers/scripted-receiver';
import { hasChromium, launchChromium, NO_CHROMIUM_REASON, saveScreenshot, seriousAxeFindings, type TestBrowser } from '../helpers/browser';

/** A loopback HTTP server. */
interface Served {
  readonly origin: string;
  close(): Promise<void>;
}

async function serve(handle: (req: IncomingMessage, body: Buffer, res: ServerResponse) => void | Promise<void>): Promise<Served> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      Promise.resolve(handle(req, Buffer.concat(chunks), res)).catch((e: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(e));
      });
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

/**
 * A portal session's permissions, as the API grants them: the read ones, plus the webhook ones
 * unless read-only; never the tokens' or the members' (docs/behaviour.md#the-embedded-console).
 */
const SESSION_READ = ['audit:list', 'notification:list', 'event-type:list', 'webhook:read', 'webhook:list'];
const SESSION_WRITE = [
  ...SESSION_READ,
  'notification:ack',
  'webhook:write',
  'webhook:delete',
  'webhook:rotate-secret',
  'webhook:test',
  'webhook:replay',
];

/** What a portal link is minted with (the exchange answer's fields but the token and workspace). */
interface LinkOptions {
  readonly scopes?: readonly string[];
  readonly readOnly?: boolean;
  readonly eventTypes?: readonly string[] | null;
  readonly returnUrl?: string | null;
  readonly expiresInSeconds?: number;
  readonly branding?: { displayName?: string; accentColor?: string };
}

/**
 * The parent page: the platform's settings page framing the console at `src`, with the frame
 * attributes the README advises (a sandbox that keeps the console working, clipboard for its
 * copy buttons), so the advice is what these tests run.
 */
function parentPage(src: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Acme Cloud: settings</title>
  <style>
    body { margin: 0; font: 15px/1.4 system-ui, sans-serif; background: #eef1f5; color: #1b1f24; }
    .bar { background: #20232a; color: #fff; padding: 12px 20px; font-weight: 700; }
    main { padding: 16px 20px; }
    h1 { font-size: 20px; margin: 0 0 12px; }
    iframe { display: block; width: 100%; height: 760px; border: 1px solid #c9ced6; border-radius: 6px; background: #fff; }
  </style>
</head>
<body>
  <div class="bar">Acme Cloud</div>
  <main>
    <h1>Settings · Webhooks</h1>
    <iframe title="Webhooks" src="${src.replaceAll('"', '&quot;')}" allow="clipboard-write" referrerpolicy="no-referrer"
      sandbox="allow-scripts allow-same-origin allow-forms allow-top-navigation-by-user-activation"></iframe>
  </main>
</body>
</html>`;
}

describe.skipIf(!hasChromium)(`the console embedded in the platform's product${NO_CHROMIUM_REASON}`, () => {
  let api: TestApi;
  let front: Served;
  let parent: Served;
  let other: Served;
  let receiver: Awaited<ReturnType<typeof scriptedReceiver>>;
  let browser: TestBrowser;
  const pages: Page[] = [];
  /** Codes handed out and not yet used, with the answer their exchange gives. */
  const codes = new Map<string, Record<string, unknown>>();

  beforeAll(async () => {
    // The platform's pages: its own origin, allowed to frame the console, and another one that is not.
    parent = await serve((req, _body, res) => {
      const src = new URL(req.url ?? '/', 'http://x').searchParams.get('src') ?? '';
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(parentPage(src));
    });
    other = await serve((req, _body, res) => {
      const src = new URL(req.url ?? '/', 'http://x').searchParams.get('src') ?? '';
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(parentPage(src));
    });
    api = await startTestApi({
      schedules: false,
      timeScale: 1000,
      onPipelineError: () => undefined,
      consoleFrameAncestors: [parent.origin],
    });
    front = await serve(async (req, body, res) => {
      if (req.method === 'POST' && req.url === '/portal-sessions/exchange') {
        const { code } = JSON.parse(body.toString('utf8') || '{}') as { code?: string };
        const answer = code ? codes.get(code) : undefined;
        // Once: a second use finds nothing, as an unknown or forged code does.
        if (code) codes.delete(code);
        res.writeHead(answer ? 200 : 404, {
          'content-type': answer ? 'application/json' : 'application/problem+json',
          'cache-control': 'no-store',
        });
        res.end(
          JSON.stringify(
            answer ?? { type: 'about:blank', title: 'Link not usable', status: 404, detail: 'This link has expired or was already used.' },
          ),
        );
        return;
      }
      const upstream = await fetch(`${api.apiUrl}${req.url ?? '/'}`, {
        method: req.method,
        headers: Object.fromEntries(
          Object.entries(req.headers).filter((e): e is [string, string] => typeof e[1] === 'string' && e[0] !== 'host'),
        ),
        ...(body.length > 0 ? { body } : {}),
      });
      const headers: Record<string, string> = {};
      upstream.headers.forEach((value, name) => {
        if (!['content-encoding', 'content-length', 'transfer-encoding', 'connection'].includes(name)) headers[name] = value;
      });
      res.writeHead(upstream.status, headers);
      res.end(Buffer.from(await upstream.arrayBuffer()));
    });
    receiver = await scriptedReceiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    browser = await launchChromium();
  });

  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') {
      for (const p of pages)
        await saveScreenshot(p, `failed-embedded-${ctx.task.name.slice(0, 40).replace(/\W+/g, '-')}`).catch(() => undefined);
    }
    await Promise.all(pages.splice(0).map((p) => p.close().catch(() => undefined)));
  });

  afterAll(async () => {
    await browser?.close();
    await receiver?.stop();
    await front?.close();
    await parent?.close();
    await other?.close();
    await api?.close();
  });

  /**
   * The platform's backend minting a portal link: a session token for the workspace, and a
   * single-use code in the console address's fragment.
   */
  async function mintLink(options: LinkOptions = {}): Promise<{ url: string; token: string; tokenId: string }> {
    const { token, tokenId } = await issueToken(api.table, api.workspace, {
      name: 'portal session',
      scopes: [...(options.scopes ?? (options.readOnly ? SESSION_READ : SESSION_WRITE))],
    });
    const code = randomBytes(24).toString('base64url');
    codes.set(code, {
      token,
      sessionId: `wps_${randomBytes(8).toString('hex')}`,
      workspace: api.workspace,
      expiresAt: new Date(Date.now() + (options.expiresInSeconds ?? 3600) * 1000).toISOString(),
      readOnly: options.readOnly ?? false,
      eventTypes: options.eventTypes ?? null,
      returnUrl: options.returnUrl === undefined ? `${parent.origin}/settings/webhooks` : options.returnUrl,
      branding: options.branding ?? { displayName: 'Globex Corporation', accentColor: '#6b2fb3' },
    });
    return { url: `${front.origin}/console/#portal=${code}`, token, tokenId };
  }

  async function newPage(width = 1280): Promise<Page> {
    const page = await browser.context.newPage();
    await page.setViewportSize({ width, height: 900 });
    pages.push(page);
    return page;
  }

  /** Opens the platform's page (the allowed origin unless told) framing `src`; answers the frame. */
  async function openFramed(src: string, from: Served = parent, width = 1280): Promise<{ page: Page; frame: FrameLocator }> {
    const page = await newPage(width);
    await page.goto(`${from.origin}/?src=${encodeURIComponent(src)}`);
    return { page, frame: page.frameLocator('iframe[title="Webhooks"]') };
  }

  /** The console's frame as a Frame (for its address, its storage and the axe scan). */
  function consoleFrame(page: Page): Frame {
    const frame = page.frames().find((f) => f !== page.mainFrame());
    if (!frame) throw new Error('the page has no frame');
    return frame;
  }

  /** axe-core on the console's own document, inside the frame (the scan evaluates there as on a page). */
  const axeInFrame = (page: Page) => seriousAxeFindings(consoleFrame(page) as unknown as Page);

  it('renders in a frame of an allowed origin: the workspace under its display name, no sign-in, no "Sign out", the code gone from the address', async () => {
    const { url } = await mintLink();
    const { page, frame } = await openFramed(url);
    await frame.getByRole('heading', { level: 1 }).first().waitFor();
    await frame.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Endpoints' }).waitFor();
    expect(await frame.getByRole('banner').textContent()).toContain('Globex Corporation');
    expect(await frame.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
    expect(await frame.getByRole('button', { name: 'Sign in' }).count()).toBe(0);
    // A portal session never sees the platform's tokens or members: no page, no overview card.
    await frame.getByRole('heading', { name: 'Endpoints and workspace' }).waitFor();
    for (const name of ['API tokens', 'Members', 'View API tokens', 'View members'])
      expect(await frame.getByRole('link', { name, exact: true }).count(), name).toBe(0);
    expect(await frame.getByText('Members', { exact: true }).count()).toBe(0);
    const inside = consoleFrame(page);
    expect(inside.url()).not.toContain('portal=');
    expect(await inside.evaluate<string>('location.hash')).not.toContain('portal');
    expect(await inside.evaluate<string>('JSON.stringify(sessionStorage)')).toContain('whk_');
    expect(await inside.evaluate<number>('localStorage.length')).toBe(0);
    expect(await inside.evaluate<string>('document.cookie')).toBe('');
    // The platform's accent, applied as the custom property the stylesheet reads.
    expect(await inside.evaluate<string>("getComputedStyle(document.querySelector('.shell')).getPropertyValue('--accent').trim()")).toBe(
      '#6b2fb3',
    );
    expect(await axeInFrame(page)).toEqual([]);
    // A reload inside the frame keeps the session, still embedded.
    await inside.evaluate('location.reload()');
    await frame.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Endpoints' }).waitFor();
    expect(await frame.getByRole('banner').textContent()).toContain('Globex Corporation');
    expect(await frame.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
  });

  it('is refused in a frame of any other origin: Chromium blocks it by the CSP and the console never runs', async () => {
    const { url } = await mintLink();
    const page = await newPage();
    const messages: string[] = [];
    page.on('console', (m) => messages.push(m.text()));
    await page.goto(`${other.origin}/?src=${encodeURIComponent(url)}`);
    await page.getByRole('heading', { name: 'Settings · Webhooks' }).waitFor();
    await expect
      .poll(() => messages.join('\n'))
      .toMatch(/Framing .* violates the following Content Security Policy directive: "frame-ancestors /);
    const frame = consoleFrame(page);
    // Chromium puts its own error page in a refused frame.
    await expect.poll(() => frame.url()).toMatch(/^chrome-error:/);
    expect(await page.frameLocator('iframe[title="Webhooks"]').getByRole('navigation', { name: 'Console' }).count()).toBe(0);
    // The code was never traded: the console's script did not run.
    expect([...codes.keys()].some((code) => url.endsWith(code))).toBe(true);
  });

  it('lets a person create an endpoint, send a test event and read its delivery, all inside the frame', async () => {
    const { url } = await mintLink();
    const { page, frame } = await openFramed(url);
    await frame.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Endpoints', exact: true }).click();
    await frame.getByRole('button', { name: 'New endpoint' }).click();
    await frame.getByRole('textbox', { name: 'URL' }).fill(receiver.url);
    await frame.getByRole('checkbox', { name: 'webhook.test_event' }).check();
    await frame.getByRole('textbox', { name: 'Description' }).fill('Acme orders receiver');
    await frame.getByRole('button', { name: 'Create endpoint' }).click();
    await frame.getByRole('button', { name: 'Send test event' }).click();
    const sent = frame.locator('.success').filter({ hasText: 'Test event queued' });
    await expect.poll(() => sent.textContent(), { timeout: 15_000 }).toContain('Delivered');
    await sent.getByRole('link', { name: /^whd_/ }).click();
    const attempts = frame.getByRole('region', { name: 'Attempts' });
    await expect.poll(() => attempts.textContent(), { timeout: 15_000 }).toContain('200');
    expect(receiver.seen.length).toBeGreaterThan(0);
    expect(await axeInFrame(page)).toEqual([]);
    // The README's picture of the embedded console at 1280 px.
    await saveScreenshot(page, 'console-embedded-1280');
  }, 60_000);

  it('shows a read-only session no write control on any page, even with a token that may write', async () => {
    const created = await api.call('POST', `/workspaces/${api.workspace}/webhooks`, {
      body: { url: receiver.url, eventTypes: ['webhook.test_event'], description: 'Read-only check' },
    });
    expect(created.status).toBe(201);
    const endpointId = created.body.endpointId as string;
    const sent = await api.call('POST', `/workspaces/${api.workspace}/webhooks/${endpointId}/test-event`, {
      headers: { 'idempotency-key': `ro-${endpointId}` },
    });
    expect(sent.status).toBe(202);
    // A token that may write: what hides the controls is the session's readOnly, decided in one place.
    const { url } = await mintLink({ scopes: SESSION_WRITE, readOnly: true });
    const { page, frame } = await openFramed(url);
    await frame.getByRole('banner').getByText('Read-only').waitFor();
    const writeControls =
      /^(New endpoint|Create endpoint|Create an endpoint|Save changes|Send test event|Rotate secret|Recover deliveries|Disable endpoint|Enable endpoint|Delete endpoint|Replay.*|Acknowledge.*)$/;
    const inside = consoleFrame(page);
    // Each page with what shows it has loaded: the controls, when allowed, come with it.
    const deliveryId = sent.body.deliveryId as string;
    const pagesToCheck: [string, () => Promise<void>][] = [
      ['overview', () => frame.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()],
      ['endpoints', () => frame.getByRole('table').getByText('Read-only check').waitFor()],
      [`endpoints/${endpointId}`, () => frame.getByRole('heading', { level: 2, name: 'Settings' }).waitFor()],
      ['deliveries', () => frame.getByRole('table').getByText(deliveryId).first().waitFor()],
      [`deliveries/${deliveryId}`, () => frame.getByRole('region', { name: 'Attempts' }).getByRole('table').waitFor()],
      ['notifications', () => frame.getByRole('heading', { level: 1, name: 'Notifications' }).waitFor()],
      ['endpoints/new', () => frame.getByText('Endpoints cannot be created here').waitFor()],
    ];
    for (const [hash, loaded] of pagesToCheck) {
      await inside.evaluate(`location.hash = '#/${hash}'`);
      await loaded();
      await frame.locator('.state-loading').first().waitFor({ state: 'detached' });
      expect(await frame.getByRole('button', { name: writeControls }).count(), hash).toBe(0);
      expect(await frame.getByRole('link', { name: writeControls }).count(), hash).toBe(0);
      expect(await frame.getByRole('button', { name: 'Sign out' }).count(), hash).toBe(0);
    }
    expect(await axeInFrame(page)).toEqual([]);
  }, 90_000);

  it('offers a session limited to some event types only those types', async () => {
    const { url } = await mintLink({ eventTypes: ['webhook.test_event'] });
    const { page, frame } = await openFramed(url);
    await consoleFrame(page).evaluate(`location.hash = '#/endpoints/new'`);
    await frame.getByRole('checkbox', { name: 'webhook.test_event' }).waitFor();
    expect(await frame.locator('input[name="eventTypes"]').count()).toBe(1);
    expect(await frame.getByRole('checkbox', { name: 'order.shipped' }).count()).toBe(0);
    // An endpoint subscribed to another type is read-only to the session.
    const foreign = await api.call('POST', `/workspaces/${api.workspace}/webhooks`, {
      body: { url: receiver.url, eventTypes: ['order.shipped'], description: 'Orders of another team' },
    });
    expect(foreign.status).toBe(201);
    await consoleFrame(page).evaluate(`location.hash = '#/endpoints/${foreign.body.endpointId as string}'`);
    await frame.getByRole('heading', { level: 2, name: 'Settings' }).waitFor();
    await frame.getByText('These settings can be viewed here but not changed.').waitFor();
    for (const name of ['Send test event', 'Rotate secret', 'Delete endpoint', 'Disable endpoint', 'Save changes'])
      expect(await frame.getByRole('button', { name }).count(), name).toBe(0);
  });

  it('refuses a link used twice with a clear page and no session, and never a sign-in form', async () => {
    const { url } = await mintLink();
    const first = await openFramed(url);
    await first.frame.getByRole('navigation', { name: 'Console' }).waitFor();
    const { page, frame } = await openFramed(url);
    await frame.getByRole('heading', { name: 'This link has expired or was already used' }).waitFor();
    await saveScreenshot(page, 'console-embedded-link-used');
    expect(await frame.getByRole('button', { name: 'Sign in' }).count()).toBe(0);
    expect(await frame.getByRole('navigation', { name: 'Console' }).count()).toBe(0);
    expect(await consoleFrame(page).evaluate<number>('sessionStorage.length')).toBe(0);
    expect(await axeInFrame(page)).toEqual([]);
    // A forged code gets the same page.
    const forged = await openFramed(`${front.origin}/console/#portal=${randomBytes(24).toString('base64url')}`);
    await forged.frame.getByRole('heading', { name: 'This link has expired or was already used' }).waitFor();
  });

  it('says when the session has expired and offers the way back to the platform', async () => {
    const { url } = await mintLink({ expiresInSeconds: 3 });
    const { page, frame } = await openFramed(url);
    await frame.getByRole('navigation', { name: 'Console' }).waitFor();
    await frame.getByRole('heading', { name: 'Your session has expired' }).waitFor({ timeout: 10_000 });
    const back = frame.getByRole('link', { name: `Return to ${new URL(parent.origin).host}` });
    expect(await back.getAttribute('href')).toBe(`${parent.origin}/settings/webhooks`);
    // The platform's page opens in the whole window, not inside its own frame.
    expect(await back.getAttribute('target')).toBe('_top');
    await saveScreenshot(page, 'console-embedded-expired');
    expect(await frame.getByRole('button', { name: 'Sign in' }).count()).toBe(0);
    expect(await consoleFrame(page).evaluate<number>('sessionStorage.length')).toBe(0);
    expect(await axeInFrame(page)).toEqual([]);
    // The sandbox the docs advise lets a click take the whole window back to the platform.
    await back.click();
    await page.waitForURL(`${parent.origin}/settings/webhooks`);
  });

  it('ends the session when the API refuses its token (401), with the message alone when there is no return address', async () => {
    const { url, tokenId } = await mintLink({ returnUrl: null });
    const { frame } = await openFramed(url);
    await frame.getByRole('navigation', { name: 'Console' }).waitFor();
    expect((await api.call('DELETE', `/workspaces/${api.workspace}/api-tokens/${tokenId}`)).status).toBe(204);
    await frame.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Endpoints', exact: true }).click();
    await frame.getByRole('heading', { name: 'Your session has expired' }).waitFor();
    expect(await frame.getByRole('link', { name: /^Return to/ }).count()).toBe(0);
    expect(await frame.getByRole('button', { name: 'Sign in' }).count()).toBe(0);
  });

  it("keeps the operators' token sign-in for a visit without a portal link", async () => {
    const page = await newPage();
    await page.goto(`${front.origin}/console`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.getByRole('textbox', { name: 'Workspace' }).fill(api.workspace);
    await page.getByLabel('API token').fill(api.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'API tokens', exact: true }).waitFor();
  });

  it('is pictured for the docs on a 390 px phone', async () => {
    const { url } = await mintLink();
    const { page, frame } = await openFramed(url, parent, 390);
    await frame.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Endpoints', exact: true }).click();
    await frame.getByRole('table').first().waitFor();
    await frame.locator('.state-loading').first().waitFor({ state: 'detached' });
    await saveScreenshot(page, 'console-embedded-390');
  });
});
