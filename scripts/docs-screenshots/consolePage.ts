// The console in a headless Chromium, as a reader of the docs sees it: 1,400 px of layout drawn at
// 880 px (what GitHub shows of a picture at most), so the pictures need no rescaling afterwards.
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../../apps/console/test/browser.ts';
import type { Manifest } from './capture.ts';
import { DEMO_TOKEN, type DemoRun } from './demoRun.ts';

const LAYOUT_WIDTH = 1400;
const DOC_WIDTH = 880;

export type Shots = { run: DemoRun; page: Page; manifest: Manifest };

export async function openConsolePage(
  run: DemoRun,
  manifest: Manifest,
): Promise<Shots & { browser: Browser }> {
  const browser = await launchBrowser();
  const context = await browser.newContext({
    viewport: { width: LAYOUT_WIDTH, height: 1000 },
    deviceScaleFactor: DOC_WIDTH / LAYOUT_WIDTH,
  });
  const page = await context.newPage();
  page.setDefaultTimeout(60_000);
  await page.goto(`${run.consoleUrl}/#token=${DEMO_TOKEN}`);
  await page.locator('#order-items input[name="sku"]').first().waitFor();
  return { browser, run, page, manifest };
}

/** Fills the form with one item and submits it; resolves with the new order's id (or undefined). */
export async function placeOrder(page: Page, customerId: string, sku: string, quantity = 1) {
  await page.locator('#order-result').evaluate((element) => element.replaceChildren());
  await page.fill('input[name="customerId"]', customerId);
  await page.fill('input[name="currency"]', 'EUR');
  await page.fill('#order-items input[name="sku"]', sku);
  await page.fill('#order-items input[name="quantity"]', String(quantity));
  await page.click('button[type="submit"]');
  await page.locator('#order-result :first-child').waitFor({ timeout: 30_000 });
  return (
    (await page
      .locator('#order-result [data-order-id]')
      .getAttribute('data-order-id', { timeout: 1_000 })
      .catch(() => null)) ?? undefined
  );
}

export const orderRow = (page: Page, id: string) => page.locator(`#orders-body tr[data-order-id="${id}"]`);

export const statusOf = (page: Page, id: string) => orderRow(page, id).locator('[data-field="status"]');

/** Presses a button of the demo panel (stop, kill, start) for `target` and waits for its state. */
export async function press(page: Page, target: string, action: 'stop' | 'kill' | 'start') {
  await page.click(`#demo tr[data-target="${target}"] button[data-action="${action}"]`);
  const state = action === 'start' ? 'running' : 'stopped';
  await page
    .locator(`#demo tr[data-target="${target}"] [data-field="state"]`)
    .filter({ hasText: state })
    .waitFor({ timeout: 120_000 });
}

export const seconds = (n: number) => new Promise((resolve) => setTimeout(resolve, n * 1000));
