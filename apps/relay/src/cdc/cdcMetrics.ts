import type { MetricsRegistry } from '@outbox/runtime/ops-server';
import { Counter, Gauge } from 'prom-client';
import type { CdcRelayHealth } from './cdcHealth.ts';

/**
 * The relay's metrics in debezium mode: the connector's state and its replication slot's cost, read
 * when Prometheus scrapes (one read shared by every gauge of a scrape, the same as /healthz shows).
 * No outbox_events here: rows stay `pending` in this mode until retention deletes them, and the
 * polling relay's backlog alerts would read them as stuck.
 */
export function createCdcMetrics(registry: MetricsRegistry, read: () => Promise<CdcRelayHealth>) {
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
  return {
    retentionDeleted: new Counter({
      name: 'outbox_cdc_retention_deleted_total',
      help: 'Outbox rows deleted by the debezium-mode retention once the replication slot confirmed them.',
      registers,
    }),
  };
}
