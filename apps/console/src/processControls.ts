import type { ProcessControl, WriteModeSwitch } from './demoControlRoutes.ts';

/** The parts of devstack's KafkaBroker (and ConnectWorker) the controls use. */
type Broker = {
  isRunning(): boolean;
  start(): Promise<void>;
  waitUntilReady(timeoutMs?: number): Promise<number>;
  stop(): Promise<boolean>;
  kill(): Promise<boolean>;
};

/** What the Kafka Connect control tells devstack's ConnectSupervisor. */
type Supervisor = { pause(): void; resume(): void };

/**
 * The demo's Kafka Connect worker (the debezium relays' connectors). It is supervised (restarted
 * when it dies on its own); stop and kill -9 tell the supervisor first, so it stays down until
 * `start`, which brings it back and has it watched again.
 */
export function connectControl(worker: Broker, supervisor?: Supervisor): ProcessControl {
  return {
    isRunning: () => worker.isRunning(),
    stop: async () => {
      supervisor?.pause();
      await worker.stop();
    },
    kill: async () => {
      supervisor?.pause();
      await worker.kill();
    },
    start: async () => {
      await worker.start();
      await worker.waitUntilReady(120_000);
      supervisor?.resume();
    },
  };
}

/** The parts of devstack's ServiceProcess the controls use. */
type Service = { readonly pid: number | undefined; stop(): Promise<void>; kill(): Promise<void> };

/** The demo's broker: `start` returns once it serves clients again (a few seconds; more after a kill). */
export function brokerControl(broker: Broker): ProcessControl {
  return {
    isRunning: () => broker.isRunning(),
    stop: async () => void (await broker.stop()),
    kill: async () => void (await broker.kill()),
    start: async () => {
      await broker.start();
      await broker.waitUntilReady(120_000);
    },
  };
}

/** A service or relay process: `current` is the running instance, `restart` starts a new one in its place. */
export function serviceControl(current: () => Service, restart: () => Promise<unknown>): ProcessControl {
  return {
    isRunning: () => current().pid !== undefined,
    stop: () => current().stop(),
    kill: () => current().kill(),
    start: async () => void (await restart()),
  };
}

/**
 * The demo's orders process, started with WRITE_MODES_SWITCHABLE=true and `token` as its
 * ORDERS_ADMIN_TOKEN: PUT /admin/write-mode switches it at once, no restart. A restarted orders
 * process is back in its configured mode (the outbox), which the order list shows.
 */
export function ordersWriteModeSwitch(ordersUrl: string, token: string): WriteModeSwitch {
  return {
    current: async () => {
      const res = await fetch(`${ordersUrl}/healthz`, { signal: AbortSignal.timeout(1500) }).catch(
        () => undefined,
      );
      if (!res?.ok) return undefined;
      const { writeMode } = (await res.json()) as { writeMode?: string };
      return writeMode;
    },
    set: async (mode) => {
      const res = await fetch(`${ordersUrl}/admin/write-mode`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ mode }),
        signal: AbortSignal.timeout(3000),
      });
      if (!res.ok) throw new Error(`orders answered ${res.status}: ${await res.text()}`);
    },
  };
}
