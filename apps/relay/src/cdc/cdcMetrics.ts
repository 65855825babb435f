import type { OutboxStore } from '@outbox/outbox';
import type { MetricsRegistry } from '@outbox/runtime/ops-server';
import { Counter, Gauge } from 'prom-client';
import type { CdcRelayHealth } from './cdcHealth.ts';

/**
 * The relay's metrics in debezium mode: the connector's state and its replication slot's cost, read
 * when Prometheus scrapes (one read shared by every gauge of a scrape, the same as /healthz shows).
 * Of the polling relay's backlog gauges only the oldest row's age: a row stays `pending` until the
 * slot confirms a position after it, which takes up to Connect's offset flush interval (a minute
 * by default), so the polling relay's backlog and stuck alerts, tuned to its seconds, would fire
 * on a healthy connector; OutboxEventUnpublishedTooLong watches the age in both modes.
 */
export function createCdcMetrics(
  registry: MetricsRegistry,
  read: () => Promise<CdcRelayHealth>,
  store: Pick<OutboxStore, 'outboxStats'>,
) {
  const registers = [registry];
  let inFlight: Promise<CdcRelayHealth> | undefined;
  const current = () => {
    inFlight ??= read().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
  new Gauge({
    name: 'outbox_cdc_connector_running',
    help: 'Whether the Debezium connector and all its tasks are RUNNING on Kafka Connect (1) or not (0).',
    registers,
    async collect() {
      const health = await current();
      this.set(health.connectorRunning ? 1 : 0);
    },
  });
  new Gauge({
    name: 'outbox_replication_slot_active',
    help: "Whether the connector's replication slot exists and a reader streams from it (1) or not (0).",
    registers,
    async collect() {
      const health = await current();
      this.set(health.slot?.active ? 1 : 0);
    },
  });
  // Kept at its last value while the database cannot be read (slotError on /healthz says why).
  new Gauge({
    name: 'outbox_replication_slot_retained_wal_bytes',
    help: "WAL the server keeps for the connector's replication slot: current position minus restart_lsn.",
    registers,
    async collect() {
      const health = await current();
      if (health.slot) this.set(health.slot.retainedWalBytes);
    },
  });
  new Gauge({
    name: 'outbox_replication_slot_unconfirmed_wal_bytes',
    help: 'WAL written since the position the connector last confirmed (confirmed_flush_lsn).',
    registers,
    async collect() {
      const health = await current();
      if (health.slot) this.set(health.slot.unconfirmedWalBytes);
    },
  });
  // Kept at its last value while the database cannot be read, as in polling mode.
  new Gauge({
    name: 'outbox_oldest_unpublished_age_seconds',
    help: 'Age of the oldest event not known to be on Kafka (pending or in flight); 0 when there is none.',
    registers,
    async collect() {
      const stats = await store.outboxStats().catch(() => undefined);
      if (stats) this.set(stats.oldestUnpublishedSeconds);
    },
  });
  return {
    confirmed: new Counter({
      name: 'outbox_cdc_confirmed_total',
      help: 'Outbox rows marked published because the replication slot confirmed a position after them.',
      registers,
    }),
    drained: new Counter({
      name: 'outbox_cdc_drained_total',
      help: 'Outbox rows the relay published itself because they were written before the slot existed (or may have been).',
      registers,
    }),
  };
}
