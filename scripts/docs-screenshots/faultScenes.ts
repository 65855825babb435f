// Walkthrough steps 3 and 8 on the one-broker demo: the naive dual write losing orders while the
// broker is dead and the outbox losing none, and a poison event dead-lettered, redriven after a fix,
// and put on the dead-letter topic by the consumers.
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { capture } from './capture.ts';
import { placeOrder, press, type Shots } from './consolePage.ts';

/** The write mode and the orders: not the timeline of an order clicked earlier, below them. */
const ordersAndMode = ({ page }: Shots) => [
  page.locator('#orders-write-mode'),
  page.locator('#orders table'),
];

const rowOf = (shots: Shots, customerId: string) =>
  shots.page.locator('#orders-body tr[data-order-id]', { hasText: customerId });

async function switchTo({ page }: Shots, mode: string): Promise<void> {
  await page.click(`#write-mode-switch button[data-write-mode="${mode}"]`);
  await page.locator('#orders-write-mode [data-field="write-mode"]').filter({ hasText: mode }).waitFor();
}

export async function naiveWriteThenOutbox(shots: Shots): Promise<void> {
  const { page, manifest } = shots;
  await switchTo(shots, 'commit-then-publish');
  await press(page, 'broker', 'kill');
  for (const customer of ['naive-1', 'naive-2']) await placeOrder(page, customer, 'MS-202');
  for (const customer of ['naive-1', 'naive-2']) {
    await rowOf(shots, customer).locator('[data-field="lost"]').waitFor();
  }
  await capture(manifest, ordersAndMode(shots), 'console-naive-write-lost-orders');

  await switchTo(shots, 'outbox');
  for (const customer of ['outbox-1', 'outbox-2']) await placeOrder(page, customer, 'MS-202');
  await press(page, 'broker', 'start');
  for (const customer of ['outbox-1', 'outbox-2']) {
    await rowOf(shots, customer)
      .locator('[data-field="status"]', { hasText: 'CONFIRMED' })
      .waitFor({ timeout: 120_000 });
  }
  await capture(manifest, ordersAndMode(shots), 'console-outbox-write-none-lost');
}

const POISON_ID = '0b9f4a52-6c1e-4c55-9b1a-2f3c4d5e6f70';

export async function poisonEvent({ page, manifest }: Shots, ordersDatabaseUrl: string): Promise<void> {
  // ~2 MB: more than the broker accepts, so the relay dead-letters it at once. The API never
  // writes such an event; an operator (or a bug) can.
  await queryOnce(
    ordersDatabaseUrl,
    `insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload)
     values ($1::uuid, '/orders', 'order', 'poison-order', 'ORDER_CREATED', 1, jsonb_build_object('note', repeat('x', 2 * 1024 * 1024)))
     on conflict (id) do nothing`,
    [POISON_ID],
  );
  const orders = page.locator('[data-service="orders"]');
  const deadLettered = orders.locator(`.failed li[data-event-id="${POISON_ID}"]`);
  await deadLettered.waitFor();
  await capture(manifest, orders, 'console-poison-dead-lettered');

  // The "fix": small enough now, though still not a valid ORDER_CREATED.
  await queryOnce(ordersDatabaseUrl, `update outbox set payload = '{"note": "fixed"}' where id = $1`, [
    POISON_ID,
  ]);
  await deadLettered.locator('button.redrive').click();
  await orders.locator(`tr[data-event-id="${POISON_ID}"][data-status="published"]`).waitFor();
  const letters = page.locator('#dead-letters-body tr', { hasText: 'poison-o' });
  await letters.nth(1).waitFor();
  await capture(
    manifest,
    page.locator('section:has(#dead-letters-body)'),
    'console-poison-on-dead-letter-topic',
  );
}
