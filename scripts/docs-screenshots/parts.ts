// What each demo of the screenshot run is made to show, in the walkthrough's order: one function
// per demo (docs-screenshots.ts starts the demo, these drive its console).
import { capture } from './capture.ts';
import { placeOrder, press, type Shots, seconds } from './consolePage.ts';
import { DEMO_POSTGRES, startLoad } from './demoRun.ts';
import { naiveWriteThenOutbox, poisonEvent } from './faultScenes.ts';
import { chartsAndBrokerOutage, overload } from './loadScenes.ts';
import {
  inventoryKilled,
  orderCancelledAndInvalid,
  orderConfirmed,
  orderTimeline,
  orderTrace,
} from './orderScenes.ts';

const ORDERS_DATABASE = `${DEMO_POSTGRES}/orders`;

/** The one-broker demo: steps 1-8, then 11 (its load would crowd the orders of the others). */
export async function demoScenes(shots: Shots): Promise<void> {
  const id = await orderConfirmed(shots);
  await orderTrace(shots, id);
  await orderTimeline(shots, id);
  await orderCancelledAndInvalid(shots);
  await inventoryKilled(shots);
  await naiveWriteThenOutbox(shots);
  await chartsAndBrokerOutage(shots);
  await overload(shots);
  // Last: its dead letters fire alerts of their own, which the other pictures are not about.
  await poisonEvent(shots, ORDERS_DATABASE);
}

/** Step 9: three brokers under load; then the one leading the most partitions killed. */
export async function clusterScenes({ page, manifest, run }: Shots): Promise<void> {
  const load = startLoad(run, ['--rate', '20', '--duration', '3m']);
  const leads = (node: number) => page.locator(`#kafka-brokers tr[data-node="${node}"] [data-field="leads"]`);
  await page.locator('#kafka-groups tr[data-group]').first().waitFor({ timeout: 120_000 });
  await seconds(30);
  await capture(manifest, page.locator('#kafka'), 'console-cluster-kafka-panel');
  const counts = await Promise.all([1, 2, 3].map(async (node) => Number(await leads(node).textContent())));
  const busiest = counts.indexOf(Math.max(...counts)) + 1;
  await page.click(`#demo tr[data-target="broker-${busiest}"] button[data-action="kill"]`);
  // Its partitions get new leaders once the controller has waited out the session (4 s here), and
  // the console's next read of the cluster shows it.
  const gone = page
    .locator(`#kafka-brokers tr[data-node="${busiest}"]`)
    .filter({ hasText: 'not in the cluster' });
  try {
    await gone.waitFor({ timeout: 120_000 });
    await leads(busiest).filter({ hasText: /^0$/ }).waitFor({ timeout: 60_000 });
    await page.locator('#kafka-partitions [data-field="isr"].error-text').first().waitFor();
  } catch (error) {
    const status = await page.locator('#kafka-status').textContent();
    await page
      .locator('#kafka')
      .screenshot({ path: 'test-results/screenshots/cluster-panel-after-kill.png' });
    throw new Error(`the Kafka panel did not show broker ${busiest} gone (status: ${status})`, {
      cause: error,
    });
  }
  await seconds(5);
  await capture(manifest, page.locator('#kafka'), 'console-cluster-broker-killed');
  await press(page, `broker-${busiest}`, 'start');
  await load;
}

/** Step 10: the orders outbox published by a Debezium connector, under load. */
export async function cdcScenes({ page, manifest, run }: Shots): Promise<void> {
  const load = startLoad(run, ['--rate', '20', '--duration', '1m']);
  await placeOrder(page, 'alice', 'KB-101');
  const card = page.locator('[data-service="orders"]');
  await card.filter({ hasText: 'RUNNING' }).waitFor({ timeout: 120_000 });
  await load;
  await seconds(15);
  await capture(manifest, card, 'console-cdc-orders-outbox-card');
  // The controls with every kind of process the demo can break: here the Connect worker too.
  await page.locator('#demo tr[data-target="connect"]').waitFor({ timeout: 60_000 });
  await capture(manifest, page.locator('#demo'), 'console-controls-panel');
}

/** The console of a demo without Prometheus and Zipkin: what is missing, where it would be. */
export async function bareScenes({ page, manifest }: Shots): Promise<void> {
  await page.locator('#alerts [data-missing="prometheus"]').waitFor();
  await page.locator('#orders [data-missing="traces"]').waitFor();
  await capture(
    manifest,
    [page.locator('#alerts'), page.locator('#orders')],
    'console-without-prometheus-and-zipkin',
  );
}
