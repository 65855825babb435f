import type { ConsumersResponse, ConsumerView, DeadLetterView } from '../shared/apiTypes.ts';
import { byId, h, shortId } from './dom.ts';

const orDash = (value: number | null | undefined) =>
  value === null || value === undefined ? '–' : String(value);

function consumerRow(view: ConsumerView): HTMLElement {
  return h(
    'tr',
    { 'data-consumer': view.consumer },
    h(
      'td',
      {},
      h('code', {}, view.consumer),
      view.error ? h('div', { class: 'muted error-text' }, view.error) : null,
    ),
    h('td', { class: 'num', 'data-field': 'processed' }, orDash(view.processed)),
    h('td', { class: 'num', 'data-field': 'applied' }, orDash(view.sinceStart?.applied)),
    h('td', { class: 'num', 'data-field': 'duplicates' }, orDash(view.sinceStart?.duplicates)),
    h('td', { class: 'num' }, orDash(view.sinceStart?.ignored)),
    h('td', { class: 'num' }, orDash(view.sinceStart?.deadLettered)),
    h('td', { class: 'num' }, orDash(view.lag)),
  );
}

/** Validation reasons can run long; the row shows the start, the tooltip all of it. */
function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function deadLetterRow(message: DeadLetterView): HTMLElement {
  return h(
    'tr',
    {},
    h('td', {}, h('code', {}, message.topic), ` ${message.partition}/${message.offset}`),
    h('td', {}, h('code', {}, message.eventType ?? '?'), message.key ? ` of ${shortId(message.key)}` : ''),
    h('td', {}, message.consumer ?? ''),
    h('td', { class: 'error-text', title: message.reason ?? '' }, shorten(message.reason ?? '', 240)),
    h('td', {}, message.time ? new Date(message.time).toLocaleTimeString() : ''),
  );
}

export function renderConsumers(response: ConsumersResponse): void {
  byId('consumers-body').replaceChildren(...response.consumers.map(consumerRow));
  const { deadLetters } = response;
  byId('dead-letter-status').textContent =
    deadLetters.status === 'reading'
      ? `Reading ${deadLetters.topics.join(', ')}.`
      : `Connecting to Kafka to read ${deadLetters.topics.join(', ')}…${deadLetters.error ? ` (${deadLetters.error})` : ''}`;
  byId('dead-letters-body').replaceChildren(
    ...(deadLetters.messages.length
      ? deadLetters.messages.map(deadLetterRow)
      : [
          h(
            'tr',
            {},
            h('td', { colspan: '5', class: 'muted' }, 'No dead letters: every message so far was readable.'),
          ),
        ]),
  );
}
