import type { Scenario, ScenarioContext } from '../scenario.ts';
import { awaitConnectorsRunning, ownConnect } from './support.ts';

/** kill -9 of the Kafka Connect worker 4 s into the load, started again 5 s later. */
async function killConnectAndRestart(context: ScenarioContext): Promise<void> {
  const { worker } = ownConnect(context);
  await context.sleep(4_000);
  context.fault('kill -9 the Kafka Connect worker');
  await worker.kill();
  await context.sleep(5_000);
  context.fault('start the Kafka Connect worker again (same group, same internal topics)');
  await worker.start();
  await worker.waitUntilReady(120_000);
  await awaitConnectorsRunning(context);
}

export const cdcConnectKill9: Scenario = {
  name: 'cdc-connect-kill-9',
  breaks:
    'CDC mode: kill -9 of the Kafka Connect worker running the three Debezium connectors mid-stream, restarted 5 s later',
  expectation:
    'The API keeps accepting orders (their rows wait in the WAL, held by the replication slots); the restarted ' +
    'worker resumes each connector from its last committed source offset, re-sending what it had sent since: ' +
    'duplicates on the topics, nothing lost, each applied once.',
  needs: { cdc: true },
  inject: killConnectAndRestart,
};

export const cdcConnectKill9ExactlyOnce: Scenario = {
  name: 'cdc-connect-kill-9-exactly-once',
  breaks:
    'CDC mode with Kafka Connect exactly-once source support: kill -9 of the worker mid-stream, restarted 5 s later',
  expectation:
    "Each poll's records and its source offset commit in one Kafka transaction: the killed worker's open " +
    'transaction is aborted and read_committed consumers never see it; the restarted worker resumes after the ' +
    'last committed transaction. No duplicate on the topics, nothing lost.',
  needs: { cdc: true, exactlyOnceSource: true },
  inject: killConnectAndRestart,
};
