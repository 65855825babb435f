// The compose target of the chaos suite: the system under test is the stack of docker-compose.yml,
// started with `./dev compose up`, instead of processes the run starts itself. The load, the
// progress watch, the ops scraper and the checker are the suite's own; only what a fault does
// differs: `docker kill`, `docker restart` and `docker network disconnect` of a container.
import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { ServiceProcess } from '@outbox/devstack/service-process';
import type { ChaosStack, DatabaseName, ProcessName } from '../stack.ts';

const run = promisify(execFile);
const repoRoot = join(import.meta.dirname, '../../../..');

const COMPOSE_PROJECT = 'outbox-reference';
/** The broker's EXTERNAL listener, published on the host (docker-compose.yml). */
export const COMPOSE_KAFKA_BROKERS = ['127.0.0.1:9092'];

/** The six processes the checker scrapes, on the ports docker-compose.yml publishes. */
const PORTS: Record<string, number> = {
  orders: 3001,
  'relay-orders': 3002,
  inventory: 3003,
  billing: 3004,
  'relay-inventory': 3005,
  'relay-billing': 3006,
};

/** What a compose scenario's fault script does to the stack. */
export type ComposeControl = {
  /** `docker kill` (SIGKILL): no shutdown hook runs, as with kill -9. */
  kill(service: string): Promise<void>;
  /** `docker start`, then wait until its healthcheck passes. */
  start(service: string): Promise<void>;
  /** `docker restart` (SIGTERM, then start), then wait until its healthcheck passes. */
  restart(service: string): Promise<void>;
  /** `docker network disconnect`: the container runs on, but reaches nothing on the compose network. */
  disconnect(service: string): Promise<void>;
  /** `docker network connect` with its service name as alias, then wait until healthy. */
  reconnect(service: string): Promise<void>;
};

type ComposeStack = { stack: ChaosStack; control: ComposeControl };

/** The profiles whose images this process has built: a profile's own images (cdc's Connect) are built with it. */
const built = new Set<string>();

/**
 * A fresh compose stack: `./dev compose down`, then `./dev compose up`, which returns once every
 * service is healthy. Fresh, because the checker compares the stock a run took with the
 * reservations in the database, which must be that run's alone. The images are built (what
 * changed) by the first call of a process for each set of profiles only.
 */
export function freshComposeStack(env: Record<string, string> = {}): void {
  const profiles = env.COMPOSE_PROFILES ?? '';
  devCompose(['down'], env);
  devCompose(['up'], { ...env, OUTBOX_COMPOSE_BUILD: built.has(profiles) ? '0' : '1' });
  built.add(profiles);
}

/** `./dev compose <args>`, as the README gives it; throws with its output when it fails. */
export function devCompose(args: string[], env: Record<string, string> = {}): void {
  const run = spawnSync(join(repoRoot, 'dev'), ['compose', ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 20 * 60_000,
  });
  if (run.status !== 0) {
    throw new Error(`./dev compose ${args.join(' ')} exited ${run.status}:\n${run.stdout}\n${run.stderr}`);
  }
}

export async function docker(...args: string[]): Promise<string> {
  return (await run('docker', args, { encoding: 'utf8' })).stdout.trim();
}

/** The container of a compose service (its first replica), by Compose's labels: v1 and v2 name them differently. */
export async function containerOf(service: string): Promise<string> {
  const id = (
    await docker(
      'ps',
      '-aq',
      '--filter',
      `label=com.docker.compose.project=${COMPOSE_PROJECT}`,
      '--filter',
      `label=com.docker.compose.service=${service}`,
    )
  ).split('\n')[0];
  if (!id)
    throw new Error(`no container of the compose service ${service}: is the stack up (./dev compose up)?`);
  return id;
}

async function waitHealthy(service: string, timeoutMs = 180_000): Promise<void> {
  const container = await containerOf(service);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const health = await docker('inspect', '--format', '{{.State.Health.Status}}', container);
    if (health === 'healthy') return;
    await sleep(500);
  }
  throw new Error(`${service} was not healthy ${timeoutMs} ms after it was started again`);
}

/** The compose stack as the chaos core sees it, and the docker controls the scenarios use. */
export async function composeStack(): Promise<ComposeStack> {
  const network = `${COMPOSE_PROJECT}_default`;
  const postgres = await containerOf('postgres');
  // No PostgreSQL port is published: the checker reads the databases at the container's address
  // on the compose network, which the host reaches (a bridge network); `docker restart` keeps it.
  const address = await docker(
    'inspect',
    '--format',
    `{{(index .NetworkSettings.Networks "${network}").IPAddress}}`,
    postgres,
  );
  const databaseUrl = (name: DatabaseName) => `postgresql://postgres:postgres@${address}:5432/${name}`;
  const down = new Set<string>();
  const processes = new Map(Object.entries(PORTS).map(([name, port]) => [name, composeProcess(name, port)]));

  const control: ComposeControl = {
    kill: async (service) => {
      down.add(service);
      await docker('kill', await containerOf(service));
    },
    start: async (service) => {
      await docker('start', await containerOf(service));
      await waitHealthy(service);
      down.delete(service);
    },
    restart: async (service) => {
      down.add(service);
      await docker('restart', await containerOf(service));
      await waitHealthy(service);
      down.delete(service);
    },
    disconnect: async (service) => {
      down.add(service);
      await docker('network', 'disconnect', network, await containerOf(service));
    },
    reconnect: async (service) => {
      await docker('network', 'connect', '--alias', service, network, await containerOf(service));
      await waitHealthy(service);
      down.delete(service);
    },
  };

  const stack: ChaosStack = {
    databases: {
      orders: { name: 'orders', url: databaseUrl('orders'), drop: async () => {} },
      inventory: { name: 'inventory', url: databaseUrl('inventory'), drop: async () => {} },
      billing: { name: 'billing', url: databaseUrl('billing'), drop: async () => {} },
    },
    // The compose apps use the default topic names and their service names as consumer groups.
    topicPrefix: '',
    groups: { orders: 'orders', inventory: 'inventory', billing: 'billing' },
    process: (name) => {
      const found = processes.get(name);
      if (!found) throw new Error(`the compose stack has no process ${name}`);
      return found;
    },
    names: () => [...processes.keys()] as ProcessName[],
    expectedDown: (name) => down.has(name),
    restart: () =>
      Promise.reject(new Error('a compose scenario restarts a container through its ComposeControl')),
    // The stack outlives a scenario: the next one runs on it, `./dev compose down` ends it.
    stop: async () => {},
  };
  return { stack, control };
}

/** A compose service as a ServiceProcess: its published port; kill and stop through docker. */
function composeProcess(name: string, port: number): ServiceProcess {
  return {
    app: name.startsWith('relay-') ? 'relay' : (name as ServiceProcess['app']),
    port,
    url: `http://127.0.0.1:${port}`,
    logFile: `docker logs of the compose service ${name}`,
    pid: undefined,
    stop: async () => void (await docker('stop', await containerOf(name))),
    kill: async () => void (await docker('kill', await containerOf(name))),
    // Docker restarts or keeps the container; its exit is not this process's to report.
    exited: () => new Promise(() => {}),
  };
}
