import type { PrometheusClient } from '../prometheus.ts';
import { errorMessage } from '../services.ts';
import type { AlertsResponse, AlertView } from '../shared/apiTypes.ts';

/**
 * The alerts Prometheus holds right now (pending or firing), from the rules it loaded: the real
 * infra/prometheus/alerts.yml. Also how often it evaluates them and which rules exist, so the page
 * can say that the demo evaluates faster than production, and what is quiet.
 */
export async function alertsView(prometheus: PrometheusClient): Promise<AlertsResponse> {
  try {
    const groups = await prometheus.rules();
    const alerts: AlertView[] = [];
    for (const group of groups) {
      for (const rule of group.rules) {
        if (rule.type !== 'alerting') continue;
        for (const alert of rule.alerts ?? []) {
          alerts.push({
            name: rule.name,
            state: alert.state,
            severity: alert.labels.severity ?? rule.labels?.severity ?? 'none',
            labels: alert.labels,
            summary: alert.annotations.summary ?? '',
            description: alert.annotations.description ?? '',
            runbook: runbookAnchor(alert.annotations.runbook_url ?? rule.annotations?.runbook_url),
            activeAt: alert.activeAt,
            forSeconds: rule.duration ?? 0,
          });
        }
      }
    }
    // Firing first, then pending; critical before warning; the oldest first.
    const rank = (alert: AlertView) =>
      (alert.state === 'firing' ? 0 : 2) + (alert.severity === 'critical' ? 0 : 1);
    alerts.sort((a, b) => rank(a) - rank(b) || a.activeAt.localeCompare(b.activeAt));
    const rules = groups.flatMap((group) => group.rules.filter((rule) => rule.type === 'alerting'));
    return {
      alerts,
      rules: rules.map((rule) => rule.name),
      evaluationSeconds: Math.min(...groups.map((group) => group.interval)),
    };
  } catch (err) {
    return { alerts: [], rules: [], evaluationSeconds: null, error: errorMessage(err) };
  }
}

/** `docs/runbooks.md#outboxbacklogtoohigh` → `outboxbacklogtoohigh`, the section the console serves. */
function runbookAnchor(url: string | undefined): string | null {
  const anchor = url?.split('#')[1];
  return anchor && /^[a-z0-9-]+$/.test(anchor) ? anchor : null;
}
