import { describe, expect, it } from 'vitest';
import { databaseName } from './database.ts';

describe('databaseName', () => {
  it('keeps a short label whole', () => {
    expect(databaseName('cdc-connect-kill-9', 'orders', 'a1b2c3')).toBe(
      'chaos_cdc_connect_kill_9_orders_a1b2c3',
    );
  });

  it('fits the longest scenario name in 63 bytes, cutting the label and keeping service and random part', () => {
    const label = 'cdc-cluster-leader-then-connect-kill-rf2-exactly-once';
    for (const service of ['orders', 'inventory', 'billing']) {
      const name = databaseName(label, service, 'a1b2c3');
      expect(Buffer.byteLength(name)).toBeLessThanOrEqual(63);
      expect(name).toMatch(new RegExp(`^chaos_cdc_cluster_leader_.*_${service}_a1b2c3$`));
    }
  });
});
