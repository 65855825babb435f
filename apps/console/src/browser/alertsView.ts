import type { AlertsResponse, AlertView } from '../shared/apiTypes.ts';
import { byId, formatAge, h, secondsSince } from './dom.ts';

function alertItem(alert: AlertView): HTMLElement {
  const where = alert.labels.job ?? alert.labels.consumer ?? '';
  return h(
    'li',
    { class: `alert ${alert.state}`, 'data-alert': alert.name, 'data-state': alert.state },
    h('span', { class: `badge ${alert.state === 'firing' ? 'failed' : 'pending'}` }, alert.state),
    ' ',
    h('strong', {}, alert.name),
    where ? h('span', { class: 'muted' }, ` ${where}`) : null,
    h('span', { class: 'muted' }, ` ${alert.severity}, active ${formatAge(secondsSince(alert.activeAt))}`),
    alert.state === 'pending' && alert.forSeconds > 0
      ? h('span', { class: 'muted' }, ` (fires after ${formatAge(alert.forSeconds)} pending)`)
      : null,
    h('div', { title: alert.description }, alert.summary),
    alert.runbook
      ? h(
          'a',
          { href: `/runbooks/${alert.runbook}`, target: '_blank', rel: 'noopener', class: 'runbook' },
          'runbook',
        )
      : null,
  );
}

export function renderAlerts(response: AlertsResponse): void {
  const list = byId('alerts-list');
  const status = byId('alerts-status');
  if (response.error) {
    list.replaceChildren();
    status.textContent = `Prometheus could not be read: ${response.error}`;
    status.className = 'bad';
    return;
  }
  list.replaceChildren(...response.alerts.map(alertItem));
  const firing = response.alerts.filter((alert) => alert.state === 'firing').length;
  const pending = response.alerts.length - firing;
  const every =
    response.evaluationSeconds === null
      ? ''
      : ` Prometheus evaluates the ${response.rules.length} rules of infra/prometheus/alerts.yml every ${response.evaluationSeconds} s` +
        (response.evaluationSeconds < 15
          ? ' (the demo is faster than production, which evaluates every 15 s).'
          : '.');
  status.className = firing ? 'bad' : 'muted';
  status.textContent =
    (response.alerts.length === 0
      ? 'No alert is pending or firing.'
      : `${firing} firing, ${pending} pending.`) + every;
}
