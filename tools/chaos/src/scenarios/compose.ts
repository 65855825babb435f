import type { Scenario } from '../scenario.ts';

// The compose stack of docker-compose.yml under load, broken from outside as an operator's mistake
// or the host would break it: `docker kill` of a container, `docker restart` of PostgreSQL, and a
// container cut off the compose network with `docker network disconnect` for longer than the
// clients' timeouts (5 s for a database statement or connection, 10 s for a consumer's Kafka
// request, 30 s for the producer's). The same checker as every other scenario judges the run.

/** Long enough for a few thousand orders, at a rate the containers keep up with on 2 cores. */
const LOAD = { rate: 30, durationMs: 40_000 };
/** Longer than every client timeout above. */
const CUT_MS = 40_000;

function killAndStart(
  name: string,
  service: string,
  breaks: string,
  expectation: string,
  profile?: 'cdc',
): Scenario {
  return {
    name,
    breaks,
    expectation,
    needs: { compose: profile ? { profile } : {} },
    load: LOAD,
    inject: async (context) => {
      const stack = context.compose;
      await context.sleep(8_000);
      context.fault(`docker kill ${service}`);
      await stack.kill(service);
      await context.sleep(5_000);
      context.fault(`docker start ${service}`);
      await stack.start(service);
      context.restored(`${service} healthy`);
    },
  };
}

function networkCut(name: string, service: string, breaks: string, expectation: string): Scenario {
  return {
    name,
    breaks,
    expectation,
    needs: { compose: {} },
    load: { ...LOAD, durationMs: CUT_MS + 20_000 },
    inject: async (context) => {
      const stack = context.compose;
      await context.sleep(8_000);
      context.fault(`docker network disconnect ${service}`);
      await stack.disconnect(service);
      await context.sleep(CUT_MS);
      context.fault(`docker network connect ${service}`);
      await stack.reconnect(service);
      context.restored(`${service} healthy`);
    },
  };
}

/** `npm run chaos -- compose`: every scenario on the compose stack, the CDC one last (it switches the relays). */
export const COMPOSE_SCENARIOS: Scenario[] = [
  killAndStart(
    'compose-broker-kill',
    'kafka',
    'docker kill of the Kafka container mid-stream, started again 5 s later',
    'The API keeps accepting orders, their events wait in the outboxes; after the start the backlog drains and every event is applied once.',
  ),
  killAndStart(
    'compose-relay-kill',
    'relay-orders',
    'docker kill of relay-orders mid-batch, started again 5 s later',
    'Rows it had leased are published again after the lease expires (duplicates, absorbed by the inboxes); nothing is lost.',
  ),
  killAndStart(
    'compose-service-kill',
    'inventory',
    'docker kill of the inventory service mid-stream, started again 5 s later',
    'Its consumer group rebalances; uncommitted events are delivered again and skipped by the inbox; every reservation is made once.',
  ),
  {
    name: 'compose-postgres-restart',
    breaks: 'docker restart of the PostgreSQL container (all three service databases) under load',
    expectation:
      'Requests fail fast while it is down and are retried; relays and consumers reconnect; every committed order is published and applied once.',
    needs: { compose: {} },
    load: LOAD,
    inject: async (context) => {
      const stack = context.compose;
      await context.sleep(8_000);
      context.fault('docker restart postgres');
      await stack.restart('postgres');
      context.restored('postgres healthy');
    },
  },
  networkCut(
    'compose-relay-network-cut',
    'relay-orders',
    `relay-orders cut off the compose network (broker and database) for ${CUT_MS / 1000} s`,
    'Its backlog waits in the outbox while it is cut off; once back it publishes it; rows it had leased are published again, nothing is lost.',
  ),
  networkCut(
    'compose-service-network-cut',
    'inventory',
    `the inventory service cut off the compose network (its database and the broker) for ${CUT_MS / 1000} s`,
    'Its consumer group loses the member and its transactions fail; once back it applies what it missed, each event once.',
  ),
  killAndStart(
    'compose-cdc-connect-kill',
    'connect',
    'docker kill of the Kafka Connect worker (every outbox published by Debezium), started again 5 s later',
    'The connectors resume from their committed offsets: a block of events is sent again (absorbed by the inboxes), nothing is lost, and the relays mark every row published.',
    'cdc',
  ),
];
