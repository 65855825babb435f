import { describe, expect, it } from 'vitest';
import { planChaosStack, type StackOptions } from './stack.ts';

const databaseUrls = {
  orders: 'postgresql://postgres@127.0.0.1:5432/orders',
  inventory: 'postgresql://postgres@127.0.0.1:5432/inventory',
  billing: 'postgresql://postgres@127.0.0.1:5432/billing',
};

/** As the cluster scenarios run it: a second instance of every service and a second relay per outbox. */
const clusterOptions: StackOptions = {
  label: 'plan-test',
  kafkaBrokers: ['127.0.0.1:9092'],
  postgresUrl: 'postgresql://postgres@127.0.0.1:5432/postgres',
  extraRelays: { orders: 1, inventory: 1, billing: 1 },
  extraInstances: { orders: 1, inventory: 1, billing: 1 },
  env: { orders: { WRITE_MODE: 'outbox' }, 'relay-billing': { RELAY_BATCH_SIZE: '50' } },
};

describe('planChaosStack', () => {
  it('puts the run’s KAFKA_CLIENT on every service, extra instance and relay', () => {
    const { plans } = planChaosStack({ ...clusterOptions, kafkaClient: 'platformatic' }, databaseUrls, 'p.');
    expect([...plans.keys()].sort()).toEqual(
      [
        'orders',
        'orders-2',
        'inventory',
        'inventory-2',
        'billing',
        'billing-2',
        'relay-orders',
        'relay-orders-2',
        'relay-inventory',
        'relay-inventory-2',
        'relay-billing',
        'relay-billing-2',
      ].sort(),
    );
    for (const [name, plan] of plans)
      expect({ name, client: plan.env.KAFKA_CLIENT }).toEqual({ name, client: 'platformatic' });
    // The scenario's own environment is still there beside it.
    expect(plans.get('orders-2')?.env.WRITE_MODE).toBe('outbox');
    expect(plans.get('relay-billing-2')?.env.RELAY_BATCH_SIZE).toBe('50');
  });

  it('leaves KAFKA_CLIENT to each process’s default when the run names no client', () => {
    const { plans } = planChaosStack(clusterOptions, databaseUrls, 'p.');
    expect([...plans.values()].filter((plan) => 'KAFKA_CLIENT' in plan.env)).toEqual([]);
  });

  it('puts the run’s KAFKA_GROUP_PROTOCOL on every service and extra instance, none on a relay', () => {
    const { plans } = planChaosStack(
      { ...clusterOptions, kafkaClient: 'platformatic', groupProtocol: 'consumer' },
      databaseUrls,
      'p.',
    );
    const protocols = Object.fromEntries(
      [...plans].map(([name, plan]) => [name, plan.env.KAFKA_GROUP_PROTOCOL]),
    );
    expect(protocols).toEqual({
      orders: 'consumer',
      'orders-2': 'consumer',
      inventory: 'consumer',
      'inventory-2': 'consumer',
      billing: 'consumer',
      'billing-2': 'consumer',
      'relay-orders': undefined,
      'relay-orders-2': undefined,
      'relay-inventory': undefined,
      'relay-inventory-2': undefined,
      'relay-billing': undefined,
      'relay-billing-2': undefined,
    });
  });
});
