import type { GhostOrderView, OrdersResponse, OrderView, TracesStatus } from '../shared/apiTypes.ts';
import { byId, formatAge, formatMoney, h, secondsSince, shortId } from './dom.ts';

/** What each step of the saga looks like on screen. */
function stepBadge(label: string, value: string | null): HTMLElement {
  const state = value ?? 'waiting';
  return h('span', { class: `badge ${state.toLowerCase()}` }, `${label}: ${state.toLowerCase()}`);
}

function orderRow(
  order: OrderView,
  selected: boolean,
  onSelect: (id: string) => void,
  tracesDown: boolean,
): HTMLElement {
  const created = Date.parse(order.createdAt);
  const history = order.history.map((entry) =>
    h(
      'li',
      {},
      h('code', {}, entry.event),
      ` +${((Date.parse(entry.at) - created) / 1000).toFixed(2)} s`,
      entry.detail ? ` (${entry.detail})` : '',
    ),
  );
  return h(
    'tr',
    {
      'data-order-id': order.id,
      class: selected ? 'selectable selected' : 'selectable',
      title: 'Show where the time went for this order',
      onclick: (event) => {
        // The trace link opens the trace; anywhere else on the row shows the timeline.
        if (!(event.target instanceof HTMLAnchorElement)) onSelect(order.id);
      },
    },
    h(
      'td',
      {},
      h('code', { title: order.id }, shortId(order.id)),
      h('div', { class: 'muted' }, order.customerId),
    ),
    h('td', {}, order.items.map((item) => `${item.quantity} × ${item.sku}`).join(', ')),
    h('td', { class: 'num' }, formatMoney(order.totalCents, order.currency)),
    h(
      'td',
      {},
      h('span', { class: `badge ${order.status.toLowerCase()}`, 'data-field': 'status' }, order.status),
      order.lost ? h('span', { class: 'badge lost', 'data-field': 'lost' }, 'LOST') : null,
      order.lost ? h('div', { class: 'reason', 'data-field': 'lost-reason' }, LOST) : null,
      order.cancelReason
        ? h('div', { class: 'reason', 'data-field': 'cancel-reason' }, order.cancelReason)
        : null,
    ),
    h('td', {}, stepBadge('stock', order.stockStatus), ' ', stepBadge('payment', order.paymentStatus)),
    h(
      'td',
      {},
      history.length
        ? h('ol', { class: 'history' }, ...history)
        : h('span', { class: 'muted' }, 'no reply yet'),
    ),
    h('td', { class: 'num' }, formatAge(secondsSince(order.createdAt)), traceCell(order, tracesDown)),
  );
}

/** The order's trace link; or why there is none: sampled out, or the trace store does not answer. */
function traceCell(order: OrderView, tracesDown: boolean): HTMLElement | null {
  if (order.traceUrl) {
    return h('div', {}, h('a', { href: order.traceUrl, target: '_blank', rel: 'noopener' }, 'trace'));
  }
  if (order.sampledOut) {
    return h(
      'div',
      {
        class: 'muted',
        'data-field': 'not-traced',
        title:
          'Sampled out under load: each process records at most TRACING_MAX_TRACES_PER_SECOND new traces a second.',
      },
      'not traced',
    );
  }
  return tracesDown
    ? h('div', { class: 'muted', 'data-field': 'traces-unavailable' }, 'traces unavailable')
    : null;
}

/** Why an order is marked: one line each, the failure the outbox prevents. */
const LOST =
  'Lost event: the order committed but its ORDER_CREATED never reached Kafka (commit-then-publish, the send failed or the process died after COMMIT). Nobody will ever answer it.';
const GHOST =
  "Ghost event: ORDER_CREATED was sent, then the order's transaction failed (publish-then-commit). Inventory and billing acted on an order that does not exist.";

function ghostRow(ghost: GhostOrderView): HTMLElement {
  return h(
    'tr',
    { 'data-ghost-id': ghost.id, class: 'ghost' },
    h('td', {}, h('code', { title: ghost.id }, shortId(ghost.id))),
    h('td', { class: 'muted' }, 'not in the orders database'),
    h('td', {}),
    h(
      'td',
      {},
      h('span', { class: 'badge ghost', 'data-field': 'status' }, 'GHOST'),
      h('div', { class: 'reason', 'data-field': 'ghost-reason' }, GHOST),
    ),
    h('td', {}, stepBadge('stock', ghost.reservation), ' ', stepBadge('payment', ghost.payment)),
    h('td', {}),
    h('td', { class: 'num' }, formatAge(secondsSince(ghost.at))),
  );
}

/** Which write mode orders runs in; a naive one in red, with what it risks. */
function renderWriteMode(mode: string | undefined): void {
  const line = byId('orders-write-mode');
  if (!mode) {
    line.replaceChildren();
    return;
  }
  const naive = mode !== 'outbox';
  line.replaceChildren(
    'Orders writes ORDER_CREATED with: ',
    h('span', { class: `badge ${naive ? 'naive' : 'relay-ok'}`, 'data-field': 'write-mode' }, mode),
    naive
      ? ' — a naive dual write, for the lesson: orders marked LOST or GHOST below are what it does when something fails between its two writes.'
      : ' — the order and its event in one transaction, published by the relay.',
  );
}

/** The orders table; clicking a row selects its order, whose timeline shows under the table. */
export function renderOrders(
  response: OrdersResponse,
  selected: string | undefined,
  onSelect: (id: string) => void,
): void {
  renderWriteMode(response.writeMode);
  if (response.traces) renderTracesStatus(response.traces);
  const tracesDown = response.traces?.available === false;
  const body = byId('orders-body');
  if (response.error) {
    const message = `Cannot read the orders API: ${response.error}`;
    body.replaceChildren(h('tr', {}, h('td', { colspan: '7', class: 'bad' }, message)));
  } else if (response.orders.length === 0) {
    body.replaceChildren(
      h('tr', {}, h('td', { colspan: '7', class: 'muted' }, 'No orders yet: place one above.')),
    );
  } else {
    body.replaceChildren(
      ...response.orders.map((order) => orderRow(order, order.id === selected, onSelect, tracesDown)),
      ...response.ghosts.map(ghostRow),
    );
  }
}

/** What the trace links are, while the trace store answers. */
export const TRACES_LINKED =
  'Each order links to its trace: one trace from the POST through every relay and consumer. Past the ' +
  'sampling rate (under load), an order says "not traced" instead.';

/** Whether the trace links work now: the trace store (Zipkin) may be down, or restarting. */
function renderTracesStatus(traces: TracesStatus): void {
  const status = byId('traces-status');
  status.dataset.available = String(traces.available);
  status.className = traces.available ? 'muted' : 'bad';
  status.textContent = traces.available
    ? TRACES_LINKED
    : `Traces unavailable: ${traces.reason} The links come back when it answers again.`;
}
