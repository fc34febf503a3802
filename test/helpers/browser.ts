/**
 * Debian's Chromium driven by playwright-core, for the page tests (/reference, /console):
 * a fresh profile per launch, the machine's network flags, an axe-core scan and screenshots.
 * `.ci/run` installs Chromium; without /usr/bin/chromium the page tests are skipped.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Where Debian installs Chromium. */
const CHROMIUM = '/usr/bin/chromium';
/** True when the page tests can run. */
export const hasChromium = existsSync(CHROMIUM);
/** Appended to a skipped test's name, so the reason shows in the report. */
export const NO_CHROMIUM_REASON = hasChromium
  ? ''
  : ' (SKIPPED: no Chromium at /usr/bin/chromium; `apt-get install chromium`, as .ci/run does)';

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

/** A browser with its own profile; `close()` removes both. */
export interface TestBrowser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** Launches Chromium with a fresh profile. */
export async function launchChromium(options: { width?: number; height?: number } = {}): Promise<TestBrowser> {
  const profileDir = mkdtempSync(join(tmpdir(), 'webhooks-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: options.width ?? 1280, height: options.height ?? 900 },
    });
    return {
      context,
      async close() {
        await context.close().catch(() => undefined);
        await context
          .browser()
          ?.close()
          .catch(() => undefined);
        rmSync(profileDir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    rmSync(profileDir, { recursive: true, force: true });
    throw e;
  }
}

/** One axe-core finding, as a test failure message shows it. */
export interface AxeFinding {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: readonly string[];
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe-core (WCAG 2.x A and AA rules) on the page and answers the serious and critical
 * findings. The script is evaluated through the DevTools protocol, which a page's
 * Content-Security-Policy does not govern, so the page's own CSP stays on.
 */
export async function seriousAxeFindings(page: Page): Promise<AxeFinding[]> {
  await page.evaluate(axeSource);
  // A string, so the test project needs no DOM types: the page runs it as it is.
  const results = await page.evaluate<{ id: string; impact: string | null; help: string; nodes: string[] }[]>(`(async () => {
    const out = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return out.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => JSON.stringify(n.target)) }));
  })()`);
  return results.filter((f) => f.impact === 'serious' || f.impact === 'critical');
}

/** Where page tests save screenshots: `$CONSOLE_SCREENSHOTS`, else `test-results/screenshots`. */
function screenshotDir(): string {
  const dir = process.env.CONSOLE_SCREENSHOTS ?? join(process.cwd(), 'test-results', 'screenshots');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * Saves a screenshot named `<name>.png` in {@link screenshotDir}: the full page, or only the
 * viewport while a modal dialog is open (its backdrop covers the viewport, not the page).
 */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  const path = join(screenshotDir(), `${name}.png`);
  const dialogOpen = (await page.locator('dialog[open]').count()) > 0;
  await page.screenshot({ path, fullPage: !dialogOpen });
  return path;
}
