// Walkthrough step 12 on `./dev demo --failover`: the orders database's primary killed under load
// and its standby promoted, with the standby wait on (the cost: orders lost, none announced), and
// the same with the wait off (DEMO_STANDBY_WAIT=off: the lost orders' events are on Kafka all the same).
import { capture } from './capture.ts';
import { type Shots, seconds } from './consolePage.ts';
import { startLoad } from './demoRun.ts';

async function press({ page }: Shots, action: string): Promise<void> {
  await page
    .locator(`#databases tr[data-database="orders"] button[data-action="${action}"]:not([disabled])`)
    .click({ timeout: 120_000 });
}

async function failOverOrders(shots: Shots, picture: string): Promise<void> {
  const { page, manifest, run } = shots;
  const row = page.locator('#databases tr[data-database="orders"]');
  await row.waitFor({ timeout: 120_000 });
  // Its report cannot read these databases (they are the pairs', not DEMO_POSTGRES_URL's): only its load matters.
  const load = startLoad(run, ['--rate', '20', '--duration', '75s', '--mix', 'valid=100']);
  await seconds(15);
  await press(shots, 'pause');
  await row.locator('[data-field="standby"]', { hasText: 'receipt paused' }).waitFor();
  await seconds(4);
  await press(shots, 'kill');
  await row.locator('[data-field="primary"]', { hasText: 'dead' }).waitFor();
  await press(shots, 'promote');
  await row.locator('[data-cost="events-announced"]').waitFor({ timeout: 180_000 });
  await press(shots, 'rebuild');
  await row.locator('[data-field="standby"]', { hasText: /^:\d+$/ }).waitFor({ timeout: 180_000 });
  await load;
  await seconds(20); // the saga settles what it can
  await capture(manifest, page.locator('#databases'), picture);
}

export const failoverGuardedScenes = (shots: Shots) =>
  failOverOrders(shots, 'console-database-failover-guarded');
export const failoverUnguardedScenes = (shots: Shots) =>
  failOverOrders(shots, 'console-database-failover-unguarded');
