import type {
  AlertsResponse,
  Backend,
  ChartsResponse,
  ConsoleInfo,
  ConsumersResponse,
  DemoStatus,
  KafkaTopology,
  OrdersResponse,
  OutboxResponse,
} from '../shared/apiTypes.ts';
import type { OrderTimeline } from '../shared/timeline.ts';
import { renderAlerts } from './alertsView.ts';
import { adminToken, getJson, setAdminToken, takeTokenFromUrl } from './apiClient.ts';
import { renderCharts } from './chartsView.ts';
import { renderConsumers } from './consumersView.ts';
import { renderDemoControls } from './controlsView.ts';
import { byId, h } from './dom.ts';
import { renderKafka } from './kafkaView.ts';
import { setUpOrderForm } from './orderForm.ts';
import { renderOrders, TRACES_LINKED } from './ordersView.ts';
import { renderOutboxes } from './outboxView.ts';
import { renderTimeline } from './timelineView.ts';

/** The live views (orders, outboxes) are read again this often: polling is simple, and a second is live enough. */
const POLL_MS = 1000;
/**
 * The slow views every fifth round: the charts' points and the alerts' evaluations are five
 * seconds apart in Prometheus; the consumers' lag comes from their /metrics, which reads the
 * group's offsets from the broker; the brokers' leaders and groups change on a failover, which a
 * click on the controls follows with a full round at once (docs/performance.md, "The console open").
 */
const SLOW_EVERY = 5;

takeTokenFromUrl();
const info = await getJson<ConsoleInfo>('/api/info');

byId('links').replaceChildren(
  ...info.links.map((link) => h('a', { href: link.url, target: '_blank', rel: 'noopener' }, link.title)),
);

// Admin actions (redrive, the demo controls) need the token; without admin actions, no token field.
if (info.adminActions) {
  const field = byId<HTMLInputElement>('admin-token');
  field.value = adminToken() ?? '';
  field.addEventListener('change', () => setAdminToken(field.value.trim()));
  byId('admin').hidden = false;
}
// The demo controls exist only when the local demo turned them on; otherwise not even hidden markup.
const demoSection = byId('demo');
if (!info.demoControls) demoSection.remove();
else demoSection.hidden = false;

/** A backend that is not there: what is missing, and the one command that installs it. */
function showMissing(name: 'prometheus' | 'traces', backend: Backend): void {
  for (const box of document.querySelectorAll<HTMLElement>(`[data-missing="${name}"]`)) {
    if (backend.available) continue;
    box.replaceChildren(h('p', {}, backend.missing), h('pre', {}, h('code', {}, backend.install)));
    box.hidden = false;
  }
}
const { prometheus, traces } = info.backends;
showMissing('prometheus', prometheus);
showMissing('traces', traces);
if (!prometheus.available) byId('alerts-status').textContent = 'No alerts to show without Prometheus.';
if (traces.available) byId('traces-status').textContent = TRACES_LINKED;

/** The order whose timeline is shown, chosen by a click in the orders table. */
let selectedOrder: string | undefined;

function selectOrder(id: string): void {
  selectedOrder = id;
  refresh();
}

/** Read again every round while selected: its hops fill in as the saga and its spans arrive. */
async function readTimeline(id: string): Promise<void> {
  try {
    renderTimeline(await getJson<OrderTimeline>(`/api/orders/${id}/timeline`));
  } catch (err) {
    renderTimeline({ orderId: id, error: `Cannot read the timeline: ${String(err)}` });
  }
}

let round = 0;
let timer: ReturnType<typeof setTimeout> | undefined;
let polling = false;
let pollAgain = false;
/** A click asked for this round: read every view, the slow ones too. */
let readEverything = true;

/** One round of reads; a refresh asked for during a round runs right after it, never alongside. */
async function poll(): Promise<void> {
  if (polling) {
    pollAgain = true;
    return;
  }
  polling = true;
  clearTimeout(timer);
  const slow = readEverything || round % SLOW_EVERY === 0;
  readEverything = false;
  const reads: Promise<void>[] = [
    getJson<OrdersResponse>('/api/orders').then((orders) => renderOrders(orders, selectedOrder, selectOrder)),
    getJson<OutboxResponse>('/api/outbox').then((outbox) => renderOutboxes(outbox, info.redrive, refresh)),
  ];
  if (slow) {
    reads.push(getJson<ConsumersResponse>('/api/consumers').then(renderConsumers));
    reads.push(getJson<KafkaTopology>('/api/kafka').then(renderKafka));
  }
  if (selectedOrder) reads.push(readTimeline(selectedOrder));
  if (prometheus.available && slow) {
    reads.push(getJson<AlertsResponse>('/api/alerts').then(renderAlerts));
    reads.push(getJson<ChartsResponse>('/api/charts').then(renderCharts));
  }
  round++;
  if (info.demoControls) {
    reads.push(getJson<DemoStatus>('/api/demo').then((status) => renderDemoControls(status, refresh)));
  }
  const results = await Promise.allSettled(reads);
  const failed = results.find((result) => result.status === 'rejected');
  byId('connection').textContent = failed
    ? `The console itself is not answering (${String(failed.reason)}).`
    : '';
  byId('updated').textContent = `updated ${new Date().toLocaleTimeString()}`;
  polling = false;
  // A hidden tab reads nothing until it is shown again (visibilitychange below).
  if (pollAgain || !document.hidden) timer = setTimeout(poll, pollAgain ? 0 : POLL_MS);
  pollAgain = false;
}

/** After a click (an order placed, a broker killed): every view at once, the slow ones included. */
function refresh(): void {
  readEverything = true;
  void poll();
}

document.addEventListener('visibilitychange', () => {
  if (!document.hidden) refresh();
});

setUpOrderForm(info.catalog, info.adminActions, refresh);
void poll();
