import { containerOf, docker } from '@outbox/chaos/compose';
import { eventually } from '@outbox/devstack/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeTestsEnabled, devCompose, json, order, psql, skipNote, urls } from './composeStack.ts';

/**
 * The `cdc` profile of docker-compose.yml, run: orders written while relay-orders is down and
 * before the connector exists are published by relay-orders in debezium mode (its drain) and every
 * outbox row is marked published once the connector's slot has confirmed it; which the relay can
 * do only because its role may see the connector's session (pg_read_all_stats, init-databases.sql).
 * Without that grant /healthz says so.
 */

type Healthz = { status: string; slotError?: string };

const CDC = { COMPOSE_PROFILES: 'cdc', RELAY_MODE_ORDERS: 'debezium' };

describe.skipIf(!composeTestsEnabled)(`the compose cdc profile${skipNote}`, () => {
  // A fresh stack: no connector, slot or publication left by an earlier cdc run.
  beforeAll(() => {
    devCompose(['down']);
    devCompose(['up']);
  }, 20 * 60_000);

  afterAll(() => {
    devCompose(['down']);
  }, 5 * 60_000);

  it(
    'publishes and marks the rows written before the connector existed, and confirms their orders',
    async () => {
      await docker('stop', await containerOf('relay-orders'));
      const ids: string[] = [];
      for (let i = 0; i < 5; i += 1) {
        const placed = await json<{ id: string }>(`${urls.orders}/orders`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(order(`cdc-before-${i}`)),
        });
        expect(placed.status).toBe(201);
        ids.push(placed.body.id);
      }
      expect(
        Number(await psql('orders', "select count(*) from outbox where status = 'pending'")),
      ).toBeGreaterThanOrEqual(5);
      expect(await psql('orders', 'select count(*) from pg_replication_slots')).toBe('0');

      // The profile starts Connect and registers the connector; relay-orders comes back in debezium mode.
      devCompose(['up'], CDC);
      await eventually(
        'every orders outbox row published and marked',
        async () =>
          (await psql('orders', "select count(*) from outbox where status <> 'published'")) === '0'
            ? true
            : undefined,
        120_000,
      );
      for (const id of ids) {
        await eventually(
          `order ${id} CONFIRMED`,
          async () => {
            const { body } = await json<{ status: string }>(`${urls.orders}/orders/${id}`);
            return body.status === 'CONFIRMED' ? true : undefined;
          },
          60_000,
        );
      }
      const health = await json<Healthz & { mode: string }>(`${urls.relayOrders}/healthz`);
      expect(health.body).toMatchObject({ status: 'ok', mode: 'debezium' });
    },
    10 * 60_000,
  );

  it('says on /healthz when the relay cannot see the connector reading its slot', async () => {
    await psql('orders', 'revoke pg_read_all_stats from orders');
    try {
      const degraded = await eventually(
        '/healthz degraded',
        async () => {
          const { body } = await json<Healthz>(`${urls.relayOrders}/healthz`);
          return body.status === 'degraded' ? body : undefined;
        },
        30_000,
      );
      expect(degraded.slotError).toMatch(/pg_read_all_stats/);
    } finally {
      await psql('orders', 'grant pg_read_all_stats to orders');
    }
    await eventually(
      '/healthz ok again',
      async () =>
        (await json<Healthz>(`${urls.relayOrders}/healthz`)).body.status === 'ok' ? true : undefined,
      30_000,
    );
  }, 120_000);
});
