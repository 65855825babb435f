import type { OutboxResponse, OutboxRowView, OutboxView } from '../shared/apiTypes.ts';
import { postJson } from './apiClient.ts';
import { byId, formatAge, h, secondsSince, shortId } from './dom.ts';

const RELAY_STATES: Record<string, string> = {
  ok: 'publishing',
  degraded: 'degraded: cannot publish, backing off and retrying',
  down: 'down',
  unreachable: 'not running',
};

/** In debezium mode the relay publishes nothing itself: its state is its connector's and slot's. */
const CDC_RELAY_STATES: Record<string, string> = {
  ok: 'its connector publishes',
  degraded: 'degraded: its connector or its slot is not running (below)',
};

function relayState(view: OutboxView): string {
  const { status, mode } = view.relay;
  return (mode === 'debezium' ? CDC_RELAY_STATES[status] : undefined) ?? RELAY_STATES[status] ?? status;
}

/** `data-value` carries the raw number, for scripts and tests; people read the text. */
function stat(name: string, label: string, value: number, text = String(value), warn = false): HTMLElement {
  return h(
    'div',
    { class: `stat${warn ? ' warn' : ''}`, 'data-stat': name, 'data-value': String(value) },
    h('div', { class: 'value' }, text),
    h('div', { class: 'label' }, label),
  );
}

function rowState(row: OutboxRowView): string {
  if (row.status === 'in_flight' && row.leaseOwner && row.leaseExpiresAt) {
    return `leased by ${row.leaseOwner} for ${formatAge(-secondsSince(row.leaseExpiresAt))}`;
  }
  if (row.status === 'pending' && row.attempts > 0)
    return `retry in ${formatAge(-secondsSince(row.nextAttemptAt))}`;
  if (row.status === 'published' && row.publishedAt) {
    return `after ${((Date.parse(row.publishedAt) - Date.parse(row.createdAt)) / 1000).toFixed(2)} s`;
  }
  return '';
}

function rowLine(row: OutboxRowView): HTMLElement {
  return h(
    'tr',
    { 'data-event-id': row.id, 'data-aggregate-id': row.aggregateId, 'data-status': row.status },
    h('td', {}, h('code', {}, row.eventType)),
    h('td', {}, h('code', { title: row.aggregateId }, shortId(row.aggregateId))),
    h(
      'td',
      {},
      h('span', { class: `badge ${row.status}` }, row.status),
      ' ',
      h('span', { class: 'muted' }, rowState(row)),
      row.lastError ? h('div', { class: 'error-text' }, row.lastError) : null,
    ),
    h('td', { class: 'num' }, row.attempts),
  );
}

function failedLine(
  view: OutboxView,
  row: OutboxRowView,
  canRedrive: boolean,
  refresh: () => void,
): HTMLElement {
  const button = h('button', { type: 'button', class: 'redrive' }, 'Redrive');
  button.addEventListener('click', async () => {
    button.setAttribute('disabled', '');
    const answer = await postJson(
      '/api/admin/redrive',
      { service: view.service, id: row.id },
      { admin: true },
    );
    button.replaceWith(
      h(
        'span',
        { class: answer.ok ? 'ok' : 'bad' },
        answer.ok ? 'redriven' : `${answer.status} ${answer.problem.title}`,
      ),
    );
    refresh();
  });
  return h(
    'li',
    { 'data-event-id': row.id },
    h('code', {}, row.eventType),
    ` of ${shortId(row.aggregateId)} after ${row.attempts} attempt(s): `,
    h('span', { class: 'error-text' }, row.lastError ?? ''),
    ' ',
    canRedrive ? button : null,
  );
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${Math.round(bytes / 1024)} KiB`;
}

/**
 * How this outbox is published: by its relay (polling) or by a Debezium connector (debezium), with
 * the connector's state and the WAL its replication slot holds (docs/runbooks.md#outboxreplicationslotretainingwal).
 */
function modeLine(view: OutboxView): HTMLElement | null {
  const { mode, cdc } = view.relay;
  if (!mode) return null;
  if (mode === 'polling' || !cdc) {
    return h(
      'div',
      { class: 'muted', 'data-field': 'mode', 'data-mode': mode },
      'polling: the relay claims and publishes',
    );
  }
  const state = cdc.connectorState ?? 'unknown';
  const tasks = cdc.taskStates?.length ? ` (tasks ${cdc.taskStates.join(', ')})` : '';
  const slot = cdc.slot;
  return h(
    'div',
    { class: 'muted', 'data-field': 'mode', 'data-mode': mode },
    'debezium: connector ',
    h('code', {}, cdc.connector),
    ' ',
    h('span', { class: state === 'RUNNING' ? 'ok' : 'bad', 'data-field': 'connector-state' }, state),
    tasks,
    slot
      ? h(
          'span',
          {
            'data-field': 'slot',
            'data-retained-bytes': String(slot.retainedWalBytes),
            'data-unconfirmed-bytes': String(slot.unconfirmedWalBytes),
          },
          `; slot ${slot.name} ${slot.active ? 'read' : 'NOT read'}, holds ${formatBytes(slot.retainedWalBytes)} of WAL`,
          ` (${formatBytes(slot.unconfirmedWalBytes)} not yet confirmed)`,
        )
      : h('span', { class: 'bad', 'data-field': 'slot' }, `; ${cdc.slotError ?? 'no replication slot'}`),
  );
}

/** Pending, in flight, dead-lettered, oldest: or, when a connector publishes, only the rows kept. */
function statsLine(view: OutboxView, stats: NonNullable<OutboxView['stats']>): HTMLElement {
  const oldest = stats.oldestUnpublishedSeconds;
  return h(
    'div',
    { class: 'stats' },
    ...(view.relay.mode === 'debezium'
      ? // A row is marked published once the connector's slot confirmed it (docs/design.md#polling-or-cdc).
        [stat('pending', 'not yet confirmed by the slot', stats.pending)]
      : [
          stat('pending', 'pending', stats.pending, undefined, stats.pending > 0),
          stat('in-flight', 'in flight (leased)', stats.inFlight),
          stat('failed', 'dead-lettered', stats.failed, undefined, stats.failed > 0),
          stat('oldest', 'oldest unpublished', Math.floor(oldest), formatAge(oldest), oldest > 5),
        ]),
  );
}

function card(view: OutboxView, canRedrive: boolean, refresh: () => void): HTMLElement {
  const stats = view.stats;
  return h(
    'section',
    { class: 'card', 'data-service': view.service },
    h(
      'h3',
      {},
      `${view.service} outbox `,
      h(
        'span',
        { class: `badge relay-${view.relay.status}`, 'data-field': 'relay' },
        `relay-${view.service}: ${relayState(view)}`,
      ),
    ),
    modeLine(view),
    view.relay.detail && view.relay.status !== 'ok'
      ? h('div', { class: 'muted error-text' }, view.relay.detail)
      : null,
    view.error ? h('div', { class: 'bad' }, `Cannot read the ${view.service} database: ${view.error}`) : null,
    stats ? statsLine(view, stats) : null,
    h(
      'table',
      { class: 'rows' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', {}, 'event'),
          h('th', {}, 'aggregate'),
          h('th', {}, 'state (last error)'),
          h('th', {}, 'attempts'),
        ),
      ),
      h('tbody', {}, ...view.newest.map(rowLine)),
    ),
    view.failed.length
      ? h(
          'div',
          { class: 'failed' },
          h('h4', {}, 'Dead-lettered events'),
          h('ul', {}, ...view.failed.map((row) => failedLine(view, row, canRedrive, refresh))),
        )
      : null,
  );
}

export function renderOutboxes(response: OutboxResponse, canRedrive: boolean, refresh: () => void): void {
  byId('outboxes').replaceChildren(...response.services.map((view) => card(view, canRedrive, refresh)));
}
