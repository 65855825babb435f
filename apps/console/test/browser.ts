import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`); Playwright's own browser download is not used. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** CI collects test-results/, so screenshots land next to the JUnit report. */
export const screenshotDir = join(import.meta.dirname, '..', '..', '..', 'test-results', 'screenshots');

/**
 * A headless Chromium for tests. The background-networking flags keep it from calling home
 * (updates, sync, safe browsing): on a closed network those calls only add noise and load.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export type ConsolePage = {
  browser: Browser;
  page: Page;
  /** What the page logged as an error or threw, in order: a healthy console logs nothing. */
  errors: string[];
};

/**
 * A Chromium on the console at `url`, 1400 × 1000, signed in with `token` when given (the demo
 * controls need it), recording the page's errors from the first request on.
 */
export async function openConsole(url: string, token?: string): Promise<ConsolePage> {
  const browser = await launchBrowser();
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors: string[] = [];
  page.on('console', (message) => {
    // Chromium fails requests in flight when the host's network interfaces change (Docker adding or
    // removing a bridge, say): the machine's doing, not the console's.
    if (message.type() === 'error' && !message.text().includes('net::ERR_NETWORK_CHANGED'))
      errors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(token ? `${url}/#token=${token}` : url);
  return { browser, page, errors };
}

/** A full-page screenshot under test-results/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(screenshotDir, { recursive: true });
  const path = join(screenshotDir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
