import { type Supervised, type Supervisor, type SupervisorOptions, superviseJvm } from './supervisor.ts';

/**
 * Keeps the demo's Kafka Connect worker running like the demo's other long-lived processes
 * (supervisor.ts): when its JVM exits on its own, it starts it again on the same port; the
 * connectors resume from their offsets and their slots, and the debezium relays go from `degraded`
 * back to `ok`. An exit the console asks for (its stop and kill -9 buttons) is the lesson, not a
 * failure: `pause` before it, and the worker stays down until the console's start, after which
 * `resume` watches it again.
 */
export type ConnectSupervisor = Supervisor;

export function superviseConnect(worker: Supervised, options: SupervisorOptions): ConnectSupervisor {
  const wording = {
    name: 'Kafka Connect',
    whileDown: 'its connectors publish nothing until it is back',
    whenBack: 'its connectors resume from their slots',
    readyTimeoutMs: 120_000,
  };
  return superviseJvm(worker, wording, options);
}
