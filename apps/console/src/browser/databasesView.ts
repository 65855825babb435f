import type { DatabasePairView, FailoverCost } from '../shared/apiTypes.ts';
import { adminToken, postJson } from './apiClient.ts';
import { byId, h } from './dom.ts';

/** What each step teaches; shown under the controls after a click. */
const AFTERMATH: Record<string, string> = {
  pause:
    'The standby receives nothing now: every commit from here on exists on the primary only. With the standby wait on, the relay and the consumers hold back (the relay says degraded); orders are still accepted.',
  resume: 'The standby receives again and catches up; whatever waited for it is announced.',
  kill: 'kill -9 of the primary and every process of it: the services lose their connections, and the API answers 503 until a promotion.',
  promote:
    'The standby is the primary now, and the services reach it at the same address. What it had not received is gone; the row says what that cost.',
  rebuild: 'A new standby streams from the promoted primary: the next failover has somewhere to go.',
};

function lag(bytes: number | null): string {
  if (bytes === null) return '—';
  return bytes < 1024 ? `${bytes}\u00a0B` : `${(bytes / 1024).toFixed(1)}\u00a0KiB`;
}

function costCell(cost: FailoverCost | undefined): HTMLElement {
  if (!cost) return h('td', { 'data-field': 'cost' }, 'none yet');
  return h(
    'td',
    { 'data-field': 'cost' },
    h('span', { 'data-cost': 'orders-lost' }, `${cost.ordersLost} orders lost`),
    ', ',
    h('span', { 'data-cost': 'events-lost' }, `${cost.eventsLost} events lost`),
    ', ',
    h(
      'strong',
      { 'data-cost': 'events-announced', class: cost.eventsAnnounced > 0 ? 'error-text' : '' },
      `${cost.eventsAnnounced} of them announced`,
    ),
    ', ',
    h('span', { 'data-cost': 'orders-undecided' }, `${cost.ordersUndecided ?? '?'} orders undecided`),
  );
}

function databaseRow(
  view: DatabasePairView,
  onAction: (database: string, action: string) => void,
): HTMLElement {
  const { primary, standby } = view;
  const button = (action: string, text: string, enabled: boolean) =>
    h(
      'button',
      {
        type: 'button',
        'data-action': action,
        disabled: !enabled || view.busy,
        onclick: () => onAction(view.database, action),
      },
      text,
    );
  return h(
    'tr',
    { 'data-database': view.database },
    h('td', {}, `${view.database} (${view.replication}${view.standbyWait ? ', standby wait on' : ''})`),
    h(
      'td',
      {},
      h(
        'span',
        { class: `badge ${primary.alive ? 'running' : 'stopped'}`, 'data-field': 'primary' },
        primary.alive ? `:${primary.port}` : 'dead',
      ),
    ),
    h(
      'td',
      { 'data-field': 'standby' },
      standby ? `:${standby.port}${standby.receiving ? '' : ', receipt paused'}` : 'none',
    ),
    h('td', { 'data-field': 'lag' }, lag(view.lagBytes)),
    h(
      'td',
      {},
      standby?.receiving
        ? button('pause', 'Pause receipt', primary.alive && view.replication === 'async')
        : button('resume', 'Resume', Boolean(standby) && primary.alive),
      ' ',
      button('kill', 'kill -9 primary', primary.alive),
      ' ',
      button('promote', 'Promote', !primary.alive && Boolean(standby)),
      ' ',
      button('rebuild', 'Rebuild standby', primary.alive && !standby),
      view.busy ? ' working…' : '',
      view.lastError ? h('div', { class: 'error-text' }, view.lastError) : null,
    ),
    costCell(view.cost),
  );
}

/** The databases panel of `./dev demo --failover`; hidden otherwise. */
export function renderDatabases(databases: DatabasePairView[] | undefined, refresh: () => void): void {
  const container = byId('databases');
  container.hidden = databases === undefined;
  if (!databases) return;
  const onAction = async (database: string, action: string) => {
    const message = byId('demo-message');
    if (!adminToken()) {
      message.textContent = 'Enter the admin token first (the demo printed it, in the URL it gave you).';
      return;
    }
    message.textContent = `${action} on ${database}'s databases…`;
    refresh();
    const answer = await postJson(`/api/demo/databases/${database}/${action}`, {}, { admin: true });
    message.textContent = answer.ok
      ? (AFTERMATH[action] ?? 'Done.')
      : `${answer.status} ${answer.problem.title}: ${answer.problem.detail ?? ''}`;
    refresh();
  };
  byId('databases-body').replaceChildren(...databases.map((view) => databaseRow(view, onAction)));
}
