import type { ConsoleInfo, OrderView, Problem } from '../shared/api.ts';
import { postJson } from './api.ts';
import { byId, formatMoney, h, shortId } from './dom.ts';

/**
 * The order form. It checks nothing itself: the orders API validates every order, and its
 * problem+json names each bad field by a JSON Pointer into the body (`#/items/0/quantity`), which
 * is exactly how the form finds the field to show the message next to.
 */
export function setUpOrderForm(catalog: ConsoleInfo['catalog'], onPlaced: (order: OrderView) => void): void {
  const form = byId<HTMLFormElement>('order-form');
  const items = byId('order-items');
  const result = byId('order-result');

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

  const addItem = (sku = '', quantity = '1') => {
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
  };
  addItem(catalog[0]?.sku ?? 'KB-101');
  byId('add-item').addEventListener('click', () => addItem());

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    result.replaceChildren('Placing the order…');
    const data = new FormData(form);
    const quantities = data.getAll('quantity').map(String);
    // A number when it is one; anything else goes as typed, so the API says what is wrong with it.
    const body = {
      customerId: String(data.get('customerId') ?? ''),
      currency: String(data.get('currency') ?? ''),
      items: data.getAll('sku').map((sku, i) => {
        const quantity = quantities[i] ?? '';
        return { sku: String(sku), quantity: /^-?\d+(\.\d+)?$/.test(quantity) ? Number(quantity) : quantity };
      }),
    };
    const answer = await postJson<OrderView>('/api/orders', body);
    if (answer.ok) {
      result.replaceChildren(
        h(
          'span',
          { class: 'ok', 'data-order-id': answer.body.id },
          `Order ${shortId(answer.body.id)} accepted (201). `,
        ),
        'The order and its ORDER_CREATED event were committed in one transaction; the event now waits in the orders outbox for the relay.',
      );
      onPlaced(answer.body);
    } else {
      showProblem(form, result, answer.problem);
    }
  });
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
    // A refusal (4xx) writes nothing in any write mode. A failure (5xx) writes nothing with the
    // outbox (one transaction), but commit-then-publish fails after its COMMIT when the send does.
    problem.status < 500
      ? 'Nothing was written: no order, no event. '
      : 'With the outbox nothing was written (order and event are one transaction); in a naive write mode the order may be committed without its event. ',
    ...unplaced.map((line) => h('div', { class: 'field-error' }, line)),
  );
}
