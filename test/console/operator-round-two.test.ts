/**
 * The console's operator round two against the API that carries it (replay links, event ids,
 * acknowledgement, audit actor names: docs/behaviour.md), in Chromium on the real local stack with real loopback receivers: a double-clicked
 * "Replay" makes one replay and the two deliveries link to each other; a delivery lists the same
 * event's deliveries to the workspace's other endpoints; "Needs action" clears once the dead
 * letters are recovered, and a second recovery of the same window replays nothing; a
 * notification is acknowledged where it is listed; the audit log names the token that acted.
 * Every page on the way is scanned with axe.
 */
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, NO_CHROMIUM_REASON, saveScreenshot, seriousAxeFindings, type TestBrowser } from '../helpers/browser';
import { usePipelineApi } from '../helpers/local-api';

describe.skipIf(!hasChromium)(`the console's operator round two${NO_CHROMIUM_REASON}`, () => {
  const pipeline = usePipelineApi();
  let browser: TestBrowser;
  let page: Page;
  const pageErrors: string[] = [];
  // Receivers live for the whole file (a later test reads what an earlier one left).
  const receivers: { stop(): Promise<void> }[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
  });

  // Each test's endpoints go with it, so the next test's event reaches only its own.
  const endpoints: string[] = [];
  afterEach(async () => {
    for (const id of endpoints.splice(0)) await pipeline.api.call('DELETE', `${ws()}/webhooks/${id}`);
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all(receivers.map((r) => r.stop()));
  });

  const ws = () => `/workspaces/${pipeline.api.workspace}`;

  /** Signs in, unless the tab's session is still on. */
  async function signIn(token = pipeline.api.token): Promise<void> {
    await page.goto(`${pipeline.api.apiUrl}/console`);
    const signOut = page.getByRole('button', { name: 'Sign out' });
    await page.getByRole('textbox', { name: 'Workspace' }).or(signOut).waitFor();
    if (await signOut.isVisible()) return;
    await page.getByRole('textbox', { name: 'Workspace' }).fill(pipeline.api.workspace);
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  }

  async function open(hash: string): Promise<void> {
    await page.goto(`${pipeline.api.apiUrl}/console#/${hash}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
  }

  async function checkPage(name: string): Promise<void> {
    await saveScreenshot(page, `console-${name}`);
    expect(await seriousAxeFindings(page), `axe on ${name}`).toEqual([]);
  }

  /** A receiver whose answer the test switches. */
  async function switchable(initial: number) {
    const state = { status: initial };
    const receiver = await pipeline.receiver((_req, res) => {
      res.writeHead(state.status, { 'content-type': 'application/json' });
      res.end(state.status < 300 ? '{"ok":true}' : '{"error":"no"}');
    });
    receivers.push(...pipeline.stops.splice(0).map((stop) => ({ stop })));
    return { receiver, state };
  }

  async function createEndpoint(url: string, description: string, eventTypes = ['order.shipped']): Promise<string> {
    const created = await pipeline.api.call('POST', `${ws()}/webhooks`, { body: { url, eventTypes, description } });
    expect(created.status, created.text).toBe(201);
    endpoints.push(created.body.endpointId as string);
    return created.body.endpointId as string;
  }

  async function publish(type: string, payload: unknown, id?: string): Promise<string[]> {
    const res = await fetch(`${pipeline.api.apiUrl}/local/events`, {
      method: 'POST',
      body: JSON.stringify({ ...(id ? { id } : {}), workspace: pipeline.api.workspace, type, payload }),
    });
    expect(res.status).toBe(202);
    return ((await res.json()) as { deliveryIds: string[] }).deliveryIds;
  }

  async function getDelivery(id: string): Promise<Record<string, any>> {
    return (await pipeline.api.call('GET', `${ws()}/webhooks/deliveries/${id}`)).body;
  }

  async function settled(id: string, status: string): Promise<void> {
    await expect.poll(async () => (await getDelivery(id)).status, { timeout: 20_000 }).toBe(status);
  }

  async function deliveriesOf(endpointId: string): Promise<Record<string, any>[]> {
    return (await pipeline.api.call('GET', `${ws()}/deliveries?endpointId=${endpointId}&limit=200`)).body.items;
  }

  it('makes one replay of a double-clicked "Replay", and links the replay and its source both ways', { timeout: 60_000 }, async () => {
    const { receiver, state } = await switchable(400);
    const endpointId = await createEndpoint(receiver.url, 'Replay receiver');
    const [sourceId] = await publish('order.shipped', { orderId: 'r-1' });
    await settled(sourceId!, 'failed_permanent');
    state.status = 200;

    await signIn();
    await open(`deliveries/${sourceId}`);
    const replay = page.getByRole('button', { name: 'Replay', exact: true });
    await replay.dblclick();
    const queued = page.locator('.success').filter({ hasText: 'Replay queued' }).getByRole('link', { name: /^whd_/ });
    await queued.waitFor();
    const replayId = (await queued.textContent())!;

    // One replay, whatever the double click sent.
    await expect.poll(async () => (await deliveriesOf(endpointId)).filter((d) => d.replayedFrom === sourceId).length).toBe(1);
    await new Promise((ok) => setTimeout(ok, 1000));
    expect((await deliveriesOf(endpointId)).filter((d) => d.replayedFrom === sourceId)).toHaveLength(1);

    // The source lists its replay with status and time; it turns delivered without a click.
    const summary = page.locator('.delivery-summary');
    await summary.getByRole('link', { name: replayId }).waitFor();
    await expect.poll(() => summary.locator('.delivery-replays').textContent(), { timeout: 15_000 }).toContain('Delivered');
    expect((await getDelivery(sourceId!)).replays).toEqual([expect.objectContaining({ deliveryId: replayId })]);
    await checkPage('delivery-replayed');

    // A click after success is the same intent: still one replay.
    await replay.click();
    await page.locator('.success').filter({ hasText: replayId }).waitFor();
    expect((await deliveriesOf(endpointId)).filter((d) => d.replayedFrom === sourceId)).toHaveLength(1);

    // The replay points back to its source.
    await summary.getByRole('link', { name: replayId }).click();
    await page.getByRole('heading', { level: 1, name: `Delivery ${replayId}` }).waitFor();
    const back = page.locator('.delivery-summary dt', { hasText: 'Replay of' });
    await back.waitFor();
    expect(await page.locator('.delivery-summary').getByRole('link', { name: sourceId }).count()).toBe(1);
    await checkPage('delivery-replay');
  });

  it("lists an event's deliveries to the workspace's other endpoints, by label and status", { timeout: 60_000 }, async () => {
    const receivers = await Promise.all([switchable(200), switchable(200), switchable(200)]);
    const descriptions = ['Warehouse', 'Billing', 'Analytics'];
    const endpointIds: string[] = [];
    for (const [i, r] of receivers.entries()) endpointIds.push(await createEndpoint(r.receiver.url, descriptions[i]!, ['order.shipped']));
    const eventId = `evt-three-${Date.now()}`;
    const ids = await publish('order.shipped', { orderId: '42' }, eventId);
    expect(ids).toHaveLength(3);
    for (const id of ids) await settled(id, 'delivered');
    // Every delivery carries the event id, and the log finds all three by it.
    for (const id of ids) expect((await getDelivery(id)).eventId).toBe(eventId);
    const found = await pipeline.api.call('GET', `${ws()}/deliveries?eventId=${encodeURIComponent(eventId)}`);
    expect(found.body.items.map((d: { deliveryId: string }) => d.deliveryId).sort()).toEqual([...ids].sort());

    await signIn();
    const mine = (await Promise.all(ids.map(getDelivery))).find((d) => d.endpointId === endpointIds[0])!;
    await open(`deliveries/${mine.deliveryId}`);
    expect(await page.locator('.delivery-summary').textContent()).toContain(eventId);
    const siblings = page.getByRole('region', { name: 'Same event, other endpoints' });
    await siblings.getByRole('link', { name: 'Billing' }).waitFor();
    await siblings.getByRole('link', { name: 'Analytics' }).waitFor();
    expect(await siblings.getByRole('link', { name: 'Warehouse' }).count()).toBe(0);
    expect(await siblings.getByRole('row').count()).toBe(3);
    expect(await siblings.textContent()).toContain('Delivered');
    await checkPage('delivery-same-event');
  });

  it('clears "Needs action" once the dead letters are recovered; a second recovery replays nothing', { timeout: 90_000 }, async () => {
    const { receiver, state } = await switchable(500);
    const endpointId = await createEndpoint(receiver.url, 'Flaky receiver');
    const [deadId] = await publish('order.shipped', { orderId: 'd-1' });
    await settled(deadId!, 'dead_lettered');

    await signIn();
    await open('overview');
    const needs = page.getByRole('region', { name: 'Needs action' });
    await expect.poll(() => needs.textContent()).toMatch(/1 delivery was dead-lettered/);
    await checkPage('overview-needs-action');

    state.status = 200;
    await open(`endpoints/${endpointId}`);
    await page.getByRole('button', { name: 'Recover deliveries' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Count deliveries' }).click();
    await expect.poll(() => dialog.textContent()).toMatch(/(^|\D)1 delivery matches/);
    await dialog.getByRole('button', { name: 'Start recovery' }).dblclick();
    await expect.poll(() => dialog.textContent(), { timeout: 20_000 }).toMatch(/completed/i);
    await dialog.getByRole('button', { name: 'Close' }).click();
    const replays = (await deliveriesOf(endpointId)).filter((d) => d.replayedFrom === deadId);
    expect(replays).toHaveLength(1);
    await settled(replays[0]!.deliveryId, 'delivered');

    // The same window again: nothing to replay, and the count says why.
    await page.getByRole('button', { name: 'Recover deliveries' }).click();
    await dialog.getByRole('button', { name: 'Count deliveries' }).click();
    await expect.poll(() => dialog.textContent()).toMatch(/0 deliveries match/);
    expect(await dialog.textContent()).toMatch(/1 delivery left out because it already has a replay/);
    await checkPage('recover-count-replayed');
    // Including them counts the source again.
    await dialog.getByRole('checkbox', { name: 'Include deliveries already replayed' }).check();
    await dialog.getByRole('button', { name: 'Count deliveries' }).click();
    await expect.poll(() => dialog.textContent()).toMatch(/(^|\D)1 delivery matches/);
    await dialog.getByRole('button', { name: 'Close' }).click();

    await open('overview');
    // Loaded and empty (a page still loading would not match either wording of the dead letter).
    await expect.poll(() => needs.textContent()).toMatch(/Nothing needs action/);
    expect(await needs.textContent()).not.toMatch(/(was|were) dead-lettered/);
    await checkPage('overview-after-recovery');
  });

  it('acknowledges a notification where it is listed, and filters by it', { timeout: 60_000 }, async () => {
    await signIn();
    await open('notifications');
    const table = page.getByRole('table', { name: 'Notifications' });
    const row = table.getByRole('row').filter({ hasText: 'Delivery dead-lettered' }).first();
    await row.getByRole('button', { name: 'Acknowledge' }).click();
    await expect.poll(() => row.textContent()).toMatch(/Acknowledged/);
    await checkPage('notifications-acknowledged');
    const listed = await pipeline.api.call('GET', `${ws()}/notifications?acknowledged=true`);
    expect(listed.body.items.length).toBeGreaterThanOrEqual(1);
    expect(listed.body.items[0].acknowledgedAt).toEqual(expect.any(String));

    await page.getByRole('combobox', { name: 'Show' }).selectOption({ label: 'Not acknowledged' });
    await expect.poll(() => page.evaluate<string>('location.hash')).toContain('acknowledged=false');
    await page.getByRole('heading', { level: 1, name: 'Notifications' }).waitFor();
    await expect.poll(() => page.locator('.ws-acked').count()).toBe(0);
    await checkPage('notifications-not-acknowledged');
  });

  it('names the token that acted in the audit log, even after it is revoked', { timeout: 60_000 }, async () => {
    const created = await pipeline.api.call('POST', `${ws()}/api-tokens`, { body: { name: 'deploy-bot', scopes: ['write'] } });
    expect(created.status).toBe(201);
    const made = await pipeline.api.call('POST', `${ws()}/webhooks`, {
      token: created.body.token,
      body: { url: 'https://hooks.example.com/audit', eventTypes: ['order.shipped'] },
    });
    expect(made.status).toBe(201);
    expect((await pipeline.api.call('DELETE', `${ws()}/api-tokens/${created.body.tokenId}`)).status).toBe(204);

    await signIn();
    await open('audit');
    const row = page.getByRole('row').filter({ hasText: 'webhook.created' }).filter({ hasText: 'deploy-bot' });
    await row.first().waitFor();
    expect(await row.first().textContent()).toContain(created.body.tokenId);
    // The endpoint it created is named by its host (it has no description), once the endpoints are read.
    await row.first().getByRole('link', { name: 'hooks.example.com' }).waitFor();
    await checkPage('audit-named');
  });

  it('logged no page error', () => {
    expect(pageErrors).toEqual([]);
  });
});
