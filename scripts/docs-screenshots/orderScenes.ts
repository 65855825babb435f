// Walkthrough steps 2, 4 and 7 on the one-broker demo, before any load: an order confirmed with its
// trace link, its trace in Zipkin, its timeline, a cancelled one, the form's errors, and an order
// waiting for a killed inventory.
import { capture } from './capture.ts';
import { orderRow, placeOrder, press, type Shots, seconds, statusOf } from './consolePage.ts';

export async function orderConfirmed({ page, manifest }: Shots): Promise<string> {
  const id = await placeOrder(page, 'alice', 'KB-101');
  if (!id) throw new Error('the default order was not accepted');
  await statusOf(page, id).filter({ hasText: 'CONFIRMED' }).waitFor();
  await orderRow(page, id).locator('a', { hasText: 'trace' }).waitFor();
  // Its ORDER_CONFIRMED published too: every outbox row of the order is settled.
  await page
    .locator(`[data-service="orders"] tr[data-aggregate-id="${id}"][data-status="published"]`)
    .nth(1)
    .waitFor();
  await capture(manifest, page.locator('#orders'), 'console-order-confirmed');
  await capture(manifest, page.locator('#outboxes'), 'console-outboxes-published');
  return id;
}

const PROCESSES = ['orders', 'relay-orders', 'inventory', 'billing', 'relay-inventory', 'relay-billing'];

/** The trace opened from the order's link, once Zipkin holds every process's spans of it. */
export async function orderTrace({ page, manifest }: Shots, id: string): Promise<void> {
  const href = await orderRow(page, id).locator('a', { hasText: 'trace' }).getAttribute('href');
  if (!href) throw new Error('the trace link has no address');
  const api = new URL(`/api/v2/trace/${href.split('/').pop()}`, href).toString();
  const services = async () => {
    const spans = (await (await fetch(api)).json()) as { localEndpoint?: { serviceName?: string } }[];
    return new Set(spans.map((span) => span.localEndpoint?.serviceName)).size;
  };
  const deadline = Date.now() + 60_000;
  while ((await services()) < PROCESSES.length && Date.now() < deadline) await seconds(1);
  const trace = await page.context().newPage();
  await trace.goto(href);
  for (const service of PROCESSES) {
    await trace
      .getByText(new RegExp(`^${service}: `))
      .first()
      .waitFor();
  }
  await capture(manifest, trace.locator('body'), 'console-order-trace-in-zipkin');
  await trace.close();
  await page.bringToFront();
}

export async function orderTimeline({ page, manifest }: Shots, id: string): Promise<void> {
  await orderRow(page, id).locator('td').first().click();
  const box = page.locator(`#order-timeline[data-order-id="${id}"]`);
  await box.locator('[data-event-type="ORDER_CONFIRMED"]').waitFor();
  await box.locator('a[data-field="trace-link"]').waitFor();
  await capture(manifest, box, 'console-order-timeline-panel');
}

export async function orderCancelledAndInvalid({ page, manifest }: Shots): Promise<void> {
  const tooMany = await placeOrder(page, 'carol', 'MN-303', 21);
  const declined = await placeOrder(page, 'declined-bob', 'KB-101');
  for (const id of [tooMany, declined]) {
    if (!id) throw new Error('a cancelled order was not accepted in the first place');
    await statusOf(page, id).filter({ hasText: 'CANCELLED' }).waitFor();
    await orderRow(page, id).locator('[data-field="cancel-reason"]').waitFor();
  }
  await capture(manifest, page.locator('#orders table'), 'console-order-cancelled');

  await page.fill('input[name="customerId"]', '');
  await page.fill('input[name="currency"]', 'euro');
  await page.fill('#order-items input[name="sku"]', 'KB-101');
  await page.fill('#order-items input[name="quantity"]', '0');
  await page.click('button[type="submit"]');
  await page.locator('[data-error-for="#/items/0/quantity"]').filter({ hasText: /./ }).waitFor();
  await capture(manifest, page.locator('#place-order'), 'console-order-form-errors');
  await page.fill('input[name="currency"]', 'EUR');
}

/** Step 7: inventory killed, an order placed; it waits for its stock reply until inventory is back. */
export async function inventoryKilled({ page, manifest }: Shots): Promise<void> {
  await press(page, 'inventory', 'kill');
  const id = await placeOrder(page, 'dave', 'MS-202');
  if (!id) throw new Error('the order was not accepted');
  // Billing answers; inventory cannot.
  await orderRow(page, id).filter({ hasText: 'payment: authorized' }).waitFor();
  await capture(manifest, page.locator('#orders table'), 'console-inventory-killed');
  await press(page, 'inventory', 'start');
  await statusOf(page, id).filter({ hasText: 'CONFIRMED' }).waitFor({ timeout: 120_000 });
}
