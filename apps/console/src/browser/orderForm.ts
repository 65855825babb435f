import type { ConsoleInfo, OrderView, Problem } from '../shared/apiTypes.ts';
import { type Answer, postJson } from './apiClient.ts';
import { byId, formatMoney, h, shortId } from './dom.ts';

/**
 * The order form. It checks nothing itself: the orders API validates every order, and its
 * problem+json names each bad field by a JSON Pointer into the body (`#/items/0/quantity`), which
 * is exactly how the form finds the field to show the message next to. Placing an order is an
 * admin action: without the console's admin token (`canPlace` false) the form says so.
 */
export function setUpOrderForm(
  catalog: ConsoleInfo['catalog'],
  canPlace: boolean,
  onPlaced: (order: OrderView) => void,
): void {
  const form = byId<HTMLFormElement>('order-form');
  const items = byId('order-items');
  const result = byId('order-result');
  if (!canPlace) {
    form.querySelector<HTMLButtonElement>('button[type="submit"]')?.setAttribute('disabled', '');
    result.replaceChildren(
      'Placing orders from the console needs its admin token: start the console with CONSOLE_ADMIN_TOKEN set (./dev demo does; for ./dev compose up, export it first) and open its page with #token=<the token>.',
    );
  }
  showCatalog(catalog);
  addItem(items, catalog[0]?.sku ?? 'KB-101');
  byId('add-item').addEventListener('click', () => addItem(items));
  /** The order being placed: sent again with the same body, it keeps its key until a final answer. */
  const placing: { current?: { body: string; key: string } } = {};
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    result.replaceChildren('Placing the order…');
    const placed = await placeOrder(form, result, placing);
    if (placed) onPlaced(placed);
  });
}

function showCatalog(catalog: ConsoleInfo['catalog']): void {
  byId('catalog').replaceChildren(
    ...catalog.map((product) =>
      h(
        'option',
        { value: product.sku },
        `${product.name}, ${formatMoney(product.unitPriceCents, product.currency)}`,
      ),
    ),
  );
  byId('catalog-stock').replaceChildren(
    ...catalog.map((product) =>
      h(
        'li',
        {},
        h('code', {}, product.sku),
        ` ${product.name}: ${formatMoney(product.unitPriceCents, product.currency)}`,
        product.available === null ? '' : `, ${product.available} in stock`,
      ),
    ),
  );
}

/** One item row; each field carries the JSON Pointer the API's errors name it by. */
function addItem(items: HTMLElement, sku = '', quantity = '1'): void {
  const index = items.children.length;
  items.append(
    h(
      'div',
      { class: 'item-row' },
      h(
        'label',
        {},
        'SKU ',
        h('input', { name: 'sku', list: 'catalog', value: sku, 'data-pointer': `#/items/${index}/sku` }),
      ),
      h(
        'label',
        {},
        'Quantity ',
        h('input', {
          name: 'quantity',
          inputmode: 'numeric',
          size: '5',
          value: quantity,
          'data-pointer': `#/items/${index}/quantity`,
        }),
      ),
      h('span', { class: 'field-error', 'data-error-for': `#/items/${index}/sku` }),
      h('span', { class: 'field-error', 'data-error-for': `#/items/${index}/quantity` }),
    ),
  );
}

/** The form's order as the API takes it; a quantity that is not a number goes as typed, so the API says what is wrong with it. */
function orderBody(form: HTMLFormElement) {
  const data = new FormData(form);
  const quantities = data.getAll('quantity').map(String);
  return {
    customerId: String(data.get('customerId') ?? ''),
    currency: String(data.get('currency') ?? ''),
    items: data.getAll('sku').map((sku, i) => {
      const quantity = quantities[i] ?? '';
      return { sku: String(sku), quantity: /^-?\d+(\.\d+)?$/.test(quantity) ? Number(quantity) : quantity };
    }),
  };
}

/** Posts the form's order and shows the answer; the order when it was accepted. */
async function placeOrder(
  form: HTMLFormElement,
  result: HTMLElement,
  placing: { current?: { body: string; key: string } },
): Promise<OrderView | undefined> {
  const body = orderBody(form);
  // One Idempotency-Key per order, the same on every retry of it: an answer lost on the way
  // (a timeout, a 503 whose commit may have happened) then never makes a second order.
  const text = JSON.stringify(body);
  if (placing.current?.body !== text) placing.current = { body: text, key: newIdempotencyKey() };
  const headers = { 'idempotency-key': placing.current.key };
  let answer: Answer<OrderView>;
  try {
    answer = await postJson<OrderView>('/api/orders', body, { admin: true, headers });
  } catch (err) {
    showFailure(result, `No answer (${String(err)}). `);
    return undefined;
  }
  if (!answer.ok && answer.status >= 500) {
    const { status, title, detail } = answer.problem;
    showFailure(result, `${status} ${title}. ${detail ?? ''} `);
    return undefined;
  }
  placing.current = undefined; // a final answer: the next order gets a new key
  if (!answer.ok) {
    showProblem(form, result, answer.problem);
    return undefined;
  }
  const replayed = answer.headers.get('idempotent-replayed') === 'true';
  result.replaceChildren(
    h(
      'span',
      { class: 'ok', 'data-order-id': answer.body.id },
      `Order ${shortId(answer.body.id)} accepted (201${replayed ? ', a replay: an earlier attempt created it' : ''}). `,
    ),
    'The order and its ORDER_CREATED event were committed in one transaction; the event now waits in the orders outbox for the relay.',
  );
  return answer.body;
}

/** 16 random bytes in hex; crypto.randomUUID exists only in secure contexts (not plain http by name). */
function newIdempotencyKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) =>
    byte.toString(16).padStart(2, '0'),
  ).join('');
}

/**
 * A 5xx or no answer: the order may or may not exist (in a naive write mode, or when a commit's
 * answer was lost). Placing the same order again retries it with the same key.
 */
function showFailure(result: HTMLElement, reason: string): void {
  result.replaceChildren(
    h('span', { class: 'bad', 'data-retry': 'same-key' }, reason),
    'Place the order again to retry: the retry carries the same Idempotency-Key, so it answers with the order if this attempt created it, and never creates a second one.',
  );
}

function clearErrors(form: HTMLFormElement): void {
  for (const element of form.querySelectorAll('[data-error-for]')) element.textContent = '';
  for (const element of form.querySelectorAll('.invalid')) element.classList.remove('invalid');
}

/** Each error next to the field its pointer names; errors without such a field above the button. */
function showProblem(form: HTMLFormElement, result: HTMLElement, problem: Problem): void {
  const unplaced: string[] = [];
  for (const error of problem.errors ?? []) {
    const pointer = error.pointer ?? '';
    const slot = [...form.querySelectorAll<HTMLElement>('[data-error-for]')].find(
      (element) => element.dataset.errorFor === pointer,
    );
    if (!slot) {
      unplaced.push(`${pointer || error.parameter || error.header || 'request'}: ${error.detail}`);
      continue;
    }
    slot.textContent = error.detail;
    for (const field of form.querySelectorAll<HTMLElement>('[data-pointer]')) {
      if (field.dataset.pointer === pointer) field.classList.add('invalid');
    }
  }
  result.replaceChildren(
    h('span', { class: 'bad' }, `${problem.status} ${problem.title}. `),
    // A refusal (4xx) writes nothing in any write mode.
    problem.status === 401
      ? 'Enter the console admin token at the top of the page (the URL ./dev demo prints carries it). Nothing was written. '
      : 'Nothing was written: no order, no event. ',
    ...unplaced.map((line) => h('div', { class: 'field-error' }, line)),
  );
}
