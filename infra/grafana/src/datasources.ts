import type { DataSourceRef } from '@grafana/grafana-foundation-sdk/dashboard';

// The datasources of provisioning/datasources/*.yml, referred to by their fixed uids (never by
// name or an import-time variable), so the dashboards load unchanged on any Grafana that
// provisions those files. test/dashboards.generated-and-shared-with-the-console.test.ts checks that both sides agree.

/** Prometheus: every panel's metrics. */
export const prometheus: DataSourceRef = { type: 'prometheus', uid: 'prometheus' };

/**
 * Zipkin, the trace store of both demos: where an exemplar's trace_id leads. The latency
 * histograms carry the trace id of an observation as an OpenMetrics exemplar; the Prometheus
 * datasource turns it into a link here.
 */
export const zipkin: DataSourceRef = { type: 'zipkin', uid: 'zipkin' };

/** The exemplar label that holds the trace id (packages/runtime/src/exemplars.ts writes it). */
export const TRACE_ID_LABEL = 'trace_id';
