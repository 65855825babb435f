// The pictures that need load (the load generator, as a reader runs it from a second terminal):
// the live charts (walkthrough step 1), the broker killed under load and its alert (step 5), and
// twice the capacity offered (step 11).
import { capture } from './capture.ts';
import { press, type Shots, seconds } from './consolePage.ts';
import { startLoad } from './demoRun.ts';

const chartPoints = (shots: Shots, id: string) =>
  shots.page.locator(`[data-chart="${id}"]`).getAttribute('data-points').then(Number);

/** Orders at a steady rate; the charts after 100 s of it; then the broker killed and started again. */
export async function chartsAndBrokerOutage(shots: Shots): Promise<void> {
  const { page, manifest } = shots;
  const load = startLoad(shots.run, [
    '--rate',
    '10',
    '--duration',
    '4m',
    '--mix',
    'valid=90,outOfStock=5,declined=5',
  ]);
  await seconds(100);
  const deadline = Date.now() + 60_000;
  while ((await chartPoints(shots, 'published').catch(() => 0)) < 10 && Date.now() < deadline)
    await seconds(2);
  await page.locator('#alerts-status').filter({ hasText: 'No alert is pending or firing' }).waitFor();
  await capture(manifest, page.locator('#live-charts'), 'console-live-charts-panel');

  await press(page, 'broker', 'kill');
  const orders = page.locator('[data-service="orders"]');
  await orders.locator('[data-field="relay"]').filter({ hasText: 'degraded' }).waitFor();
  await seconds(15);
  await capture(manifest, page.locator('#outboxes'), 'console-broker-stopped');
  // One alert per outbox whose events wait: relay-orders' comes first, the others as replies wait.
  const alert = page
    .locator('#alerts-list [data-alert="OutboxOldestPendingEventTooOld"][data-state="firing"]')
    .first();
  await alert.waitFor({ timeout: 180_000 });
  await capture(manifest, page.locator('#alerts'), 'console-alert-firing-panel');

  await press(page, 'broker', 'start');
  await orders.locator('[data-field="relay"].relay-ok').waitFor({ timeout: 120_000 });
  await seconds(20);
  await capture(manifest, page.locator('#outboxes'), 'console-broker-restarted');
  await load;
}

/**
 * Step 11: about twice what a 2-core machine sustains, valid orders only. The shedding alert goes
 * pending with the first evaluation over 5% refused; it fires only after 5 minutes of it.
 */
export async function overload(shots: Shots): Promise<void> {
  const { page, manifest } = shots;
  // The broker outage before this step leaves alerts behind for minutes (its publish errors stay in
  // the rate's window): the picture is of what overload fires, so it waits until they have cleared.
  await page
    .locator('#alerts-status')
    .filter({ hasText: 'No alert is pending or firing' })
    .waitFor({ timeout: 600_000 });
  const load = startLoad(shots.run, [
    '--rate',
    '400',
    '--duration',
    '3m',
    '--concurrency',
    '256',
    '--mix',
    'valid=100',
  ]);
  const alert = page.locator('#alerts-list [data-alert="OrdersApiSheddingLoad"]').first();
  await alert.waitFor({ timeout: 180_000 });
  await seconds(30);
  await capture(manifest, page.locator('#alerts'), 'console-overload-alert-pending');
  await load;
}
