import type { Scenario, ScenarioContext } from '../scenario.ts';
import { awaitConnectorsRunning, ownConnect } from './support.ts';

/** The three connectors registered 3 s into the load, while orders are written. */
async function registerUnderLoad(context: ScenarioContext): Promise<void> {
  const connect = ownConnect(context);
  await context.sleep(3_000);
  context.fault('register the three Debezium connectors while orders are written');
  const { databases, topicPrefix } = context.stack;
  await connect.register(
    { orders: databases.orders.url, inventory: databases.inventory.url, billing: databases.billing.url },
    topicPrefix,
  );
  await awaitConnectorsRunning(context);
}

export const cdcConnectorRegisteredUnderLoad: Scenario = {
  name: 'cdc-connector-registered-under-load',
  breaks:
    'CDC mode: the relays run in debezium mode from the start, and the connectors are registered while ' +
    'orders are written; each slot is created while transactions are open',
  expectation:
    'A slot decodes only what commits after its consistent point, reached once every transaction open at its ' +
    'creation has ended. Each relay waits for that point, then publishes every row written up to it; the ' +
    'connector streams the rest. Every outbox row on its topic, each applied once.',
  needs: { cdc: true, cdcRegisteredByTheScenario: true },
  inject: registerUnderLoad,
};
