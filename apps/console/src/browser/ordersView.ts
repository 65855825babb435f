import type { OrdersResponse, OrderView } from '../shared/api.ts';
import { byId, formatAge, formatMoney, h, secondsSince, shortId } from './dom.ts';

/** What each step of the saga looks like on screen. */
function stepBadge(label: string, value: string | null): HTMLElement {
  const state = value ?? 'waiting';
  return h('span', { class: `badge ${state.toLowerCase()}` }, `${label}: ${state.toLowerCase()}`);
}

function orderRow(order: OrderView): HTMLElement {
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
    { 'data-order-id': order.id },
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
    h(
      'td',
      { class: 'num' },
      formatAge(secondsSince(order.createdAt)),
      order.traceUrl
        ? h('div', {}, h('a', { href: order.traceUrl, target: '_blank', rel: 'noopener' }, 'trace'))
        : null,
    ),
  );
}

export function renderOrders(response: OrdersResponse): void {
  const body = byId('orders-body');
  if (response.error) {
    const message = `Cannot read the orders API: ${response.error}`;
    body.replaceChildren(h('tr', {}, h('td', { colspan: '7', class: 'bad' }, message)));
  } else if (response.orders.length === 0) {
    body.replaceChildren(
      h('tr', {}, h('td', { colspan: '7', class: 'muted' }, 'No orders yet: place one above.')),
    );
  } else {
    body.replaceChildren(...response.orders.map(orderRow));
  }
}
