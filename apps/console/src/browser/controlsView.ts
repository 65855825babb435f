import type { DemoStatus, ProcessStatus } from '../shared/apiTypes.ts';
import { adminToken, postJson } from './apiClient.ts';
import { renderDatabases } from './databasesView.ts';
import { byId, h } from './dom.ts';

/** What each button teaches; shown under the controls after a click. */
const AFTERMATH: Record<string, string> = {
  'broker/stop':
    'The broker is shutting down. Orders are still accepted (201): each event waits in its outbox. The relays cannot publish, say "degraded" and back off; watch pending and the oldest age grow.',
  'broker/kill':
    "kill -9: the broker died without a goodbye. Nothing acknowledged is lost (acks=all, flushed); the relays retry with backoff and never use up an event's attempts for it.",
  'broker/start':
    'The broker is back. The relays publish the backlog in order, inventory and billing catch up, and the pending orders complete.',
  'connect/stop':
    'Kafka Connect is stopping: its connectors publish nothing, the debezium relays say "degraded", and each replication slot keeps the WAL from its position on. Orders are still accepted; their events wait in the outbox and the WAL.',
  'connect/kill':
    "kill -9 of Kafka Connect: the connectors' last block since their committed offsets will be published again after a start (duplicates the consumers' inbox absorbs); nothing is lost, the slots hold the WAL.",
  'connect/start':
    'Kafka Connect is back: the connectors resume from their slots, and each debezium relay says "ok" again and marks the rows published as the slot confirms them.',
  'relay/stop':
    'Graceful stop: the relay finished its batch and gave back what it held. Events of this database wait until a relay runs again.',
  'relay/kill':
    "kill -9 of a relay: rows it had claimed stay leased until the lease expires (RELAY_LEASE_MS), then any relay takes them again. Some may be published twice: the consumers' inbox makes the second copy harmless.",
  'relay/start':
    'The relay is back: it claims what is due, including rows whose lease expired, and publishes them.',
  'orders/stop':
    'The orders API is down: the form gets no answer and nothing is written, so nothing can be half-written either. Replies of inventory and billing wait in Kafka for orders to consume them.',
  'orders/kill':
    'kill -9 of orders: a transaction it had open is rolled back by PostgreSQL (order and event together, or neither); a reply it had applied but not yet acknowledged to Kafka is delivered again, and its processed_events row makes the second copy harmless.',
  'orders/start':
    'Orders is back: it consumes the replies that waited in Kafka and confirms or cancels the pending orders.',
  'consumer/stop':
    'Graceful stop: the consumer finished its event and committed its offset. New orders stay PENDING; their events wait in Kafka and the lag grows.',
  'consumer/kill':
    'kill -9 of a consumer: an event applied but not yet acknowledged to Kafka is delivered again when it is back, and its processed_events row makes the second copy harmless. New orders stay PENDING meanwhile.',
  'write-mode/outbox':
    'Back to the outbox: the order and its ORDER_CREATED are written in one transaction, and the relay publishes it whenever the broker is there. Kill the broker again: orders wait PENDING, then all complete. None gets lost.',
  'write-mode/commit-then-publish':
    'commit-then-publish: orders commits the order, then sends ORDER_CREATED itself. Now kill -9 the broker and place orders: they are committed, the send fails, and after 10 s they are marked LOST, PENDING for ever.',
  'write-mode/publish-then-commit':
    'publish-then-commit: orders sends ORDER_CREATED, then commits. When the commit fails after the send (the chaos suite makes it fail), inventory and billing act on an order that does not exist: a GHOST.',
  'consumer/start':
    'The consumer is back: it resumes from its committed offset, applies what waited (the lag drops to 0), and the pending orders complete.',
};

/** Which explanation a target gets: the broker, a relay, the orders service, or a consumer service. */
function kindOf(target: string): string {
  if (target.startsWith('broker')) return 'broker';
  if (target === 'connect') return target;
  if (target === 'orders') return target;
  return target.startsWith('relay-') ? 'relay' : 'consumer';
}

function controlRow(
  target: string,
  label: string,
  status: ProcessStatus,
  onAction: (target: string, action: string) => void,
): HTMLElement {
  const state = status.busy ? 'working…' : status.running ? 'running' : 'stopped';
  const button = (action: string, text: string, enabled: boolean) =>
    h(
      'button',
      {
        type: 'button',
        'data-action': action,
        disabled: !enabled || status.busy,
        onclick: () => onAction(target, action),
      },
      text,
    );
  return h(
    'tr',
    { 'data-target': target },
    h('td', {}, label),
    h(
      'td',
      {},
      h('span', { class: `badge ${status.running ? 'running' : 'stopped'}`, 'data-field': 'state' }, state),
    ),
    h(
      'td',
      {},
      button('stop', 'Stop', status.running),
      ' ',
      button('kill', 'kill -9', status.running),
      ' ',
      button('start', 'Start', !status.running),
    ),
    h('td', { class: 'error-text' }, status.lastError ?? ''),
  );
}

/** Buttons that switch orders' write mode; the current one is pressed. */
function renderWriteModeSwitch(status: DemoStatus, refresh: () => void): void {
  const container = byId('write-mode-switch');
  const writeMode = status.writeMode;
  container.hidden = writeMode === undefined;
  if (!writeMode) return;
  const choose = async (mode: string) => {
    const message = byId('demo-message');
    if (!adminToken()) {
      message.textContent = 'Enter the admin token first (the demo printed it, in the URL it gave you).';
      return;
    }
    const answer = await postJson('/api/demo/write-mode', { mode }, { admin: true });
    message.textContent = answer.ok
      ? (AFTERMATH[`write-mode/${mode}`] ?? 'Done.')
      : `${answer.status} ${answer.problem.title}: ${answer.problem.detail ?? ''}`;
    refresh();
  };
  container.replaceChildren(
    h('strong', {}, "Orders' write mode: "),
    ...writeMode.modes.flatMap((mode) => [
      h(
        'button',
        {
          type: 'button',
          'data-write-mode': mode,
          'aria-pressed': String(mode === writeMode.current),
          disabled: mode === writeMode.current,
          onclick: () => choose(mode),
        },
        mode,
      ),
      ' ',
    ]),
    h(
      'div',
      { class: 'muted' },
      'The two naive modes are the dual writes the outbox replaces, here to be broken on purpose; a restarted orders process is back to the outbox.',
    ),
  );
}

export function renderDemoControls(status: DemoStatus, refresh: () => void): void {
  renderWriteModeSwitch(status, refresh);
  renderDatabases(status.databases, refresh);
  const onAction = async (target: string, action: string) => {
    const message = byId('demo-message');
    if (!adminToken()) {
      message.textContent = 'Enter the admin token first (the demo printed it, in the URL it gave you).';
      return;
    }
    message.textContent = `${action} ${target}…`;
    const answer = await postJson(`/api/demo/${target}/${action}`, {}, { admin: true });
    const kind = kindOf(target);
    message.textContent = answer.ok
      ? (AFTERMATH[`${kind}/${action}`] ?? 'Done.')
      : `${answer.status} ${answer.problem.title}: ${answer.problem.detail ?? ''}`;
    refresh();
  };
  byId('demo-body').replaceChildren(
    ...Object.entries(status.brokers).map(([name, broker]) =>
      controlRow(
        name,
        name === 'broker' ? 'Kafka broker' : `Kafka ${name.replace('-', ' ')}`,
        broker,
        onAction,
      ),
    ),
    ...Object.entries(status.services).map(([name, service]) =>
      controlRow(name, name === 'connect' ? 'Kafka Connect' : name, service, onAction),
    ),
  );
}
