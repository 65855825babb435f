import { spawn } from 'node:child_process';
import { KafkaBroker } from '../kafkaBroker.ts';
import { KafkaCluster } from '../kafkaCluster.ts';
import { probeKafka } from '../kafkaProbe.ts';
import { tailFile } from '../logTail.ts';
import { requireJava } from '../tools.ts';

const usage = `Usage: node tools/devstack/src/cli.ts kafka <command>

Runs the demo Kafka broker (data in .local/kafka/demo) on 127.0.0.1.
  start     start it (downloads the jars once) and wait until it is ready
  stop      graceful shutdown
  kill      kill -9, to simulate a crash; \`start\` recovers the data
  restart   stop, then start
  status    is it running and answering?
  logs      print the end of the broker log (\`logs -f\` to follow)

Environment: KAFKA_PORT (default 9092), KAFKA_CONTROLLER_PORT (default 9093).

With --cluster, the same commands act on the demo's three-broker cluster instead (data in
.local/kafka/cluster; brokers on 127.0.0.1:19192, 19292, 19392), every node or only --node N:
  ./dev kafka start --cluster            start all three and wait until each serves metadata
  ./dev kafka kill --cluster --node 2    kill -9 broker 2; the other two elect new leaders
  ./dev kafka start --cluster --node 2   start it again; it rejoins and catches up`;

const readyTimeoutMs = 90_000;

/** The demo broker; every CLI invocation builds the same one and finds a running JVM via its pid file. */
function demoBroker(): KafkaBroker {
  return new KafkaBroker({
    name: 'demo',
    port: portFromEnv('KAFKA_PORT', 9092),
    controllerPort: portFromEnv('KAFKA_CONTROLLER_PORT', 9093),
  });
}

const subcommands: Record<string, (broker: KafkaBroker, args: string[]) => Promise<number>> = {
  async start(broker) {
    const pid = broker.pid;
    if (pid !== undefined) {
      console.log(`Kafka is already running (pid ${pid}) at ${broker.brokers.join(',')}.`);
      return 0;
    }
    return startAndWait(broker, 'start');
  },

  async stop(broker) {
    const pid = broker.pid;
    if (!(await broker.stop())) {
      console.log('Kafka is not running.');
      return 0;
    }
    console.log(`Kafka stopped (was pid ${pid}).`);
    return 0;
  },

  async kill(broker) {
    const pid = broker.pid;
    if (!(await broker.kill())) {
      console.log('Kafka is not running.');
      return 0;
    }
    console.log(`Kafka killed with SIGKILL (was pid ${pid}). \`npm run kafka start\` recovers its data.`);
    return 0;
  },

  async restart(broker) {
    if (await broker.stop()) console.log('Kafka stopped.');
    return startAndWait(broker, 'restart');
  },

  async status(broker) {
    const pid = broker.pid;
    if (pid === undefined) {
      console.log(`Kafka is not running (data dir ${broker.dataDir}).`);
      return 1;
    }
    try {
      await probeKafka(broker.brokers, 3000);
      console.log(`Kafka is running (pid ${pid}) and ready at ${broker.brokers.join(',')}.`);
      console.log(`  data: ${broker.dataDir}\n  log:  ${broker.logFile}`);
      return 0;
    } catch (error) {
      console.log(
        `Kafka is running (pid ${pid}) but not answering at ${broker.brokers.join(',')}: ${(error as Error).message}`,
      );
      console.log(`It may still be starting; see \`npm run kafka logs\`.`);
      return 1;
    }
  },

  async logs(broker, args) {
    if (args.includes('-f') || args.includes('--follow')) {
      // tail -F keeps following across restarts, which append to the same file.
      const tail = spawn('tail', ['-n', '100', '-F', broker.logFile], { stdio: 'inherit' });
      return new Promise((resolve) => tail.once('exit', (code) => resolve(code ?? 0)));
    }
    const text = tailFile(broker.logFile, 200);
    console.log(text === '' ? `No broker log yet at ${broker.logFile}.` : text);
    return 0;
  },
};

export async function kafkaCommand(args: string[]): Promise<number> {
  const [name, ...rest] = args;
  const subcommand = name === undefined ? undefined : subcommands[name];
  if (subcommand === undefined) {
    if (name !== undefined && name !== 'help' && name !== '--help')
      console.error(`Unknown kafka command "${name}".\n`);
    console.error(usage);
    return name === undefined || name === 'help' || name === '--help' ? 0 : 2;
  }
  if (rest.includes('--cluster')) return clusterCommand(name as string, rest);
  return subcommand(demoBroker(), rest);
}

/** A subcommand on the demo cluster: on each of its nodes, or on the one `--node N` names. */
async function clusterCommand(name: string, args: string[]): Promise<number> {
  const cluster = new KafkaCluster({ name: 'cluster' });
  const nodeArg = args[args.indexOf('--node') + 1];
  const only = args.includes('--node') ? Number(nodeArg) : undefined;
  if (only !== undefined && !(only >= 1 && only <= cluster.nodes.length)) {
    console.error(`--node takes 1 to ${cluster.nodes.length}, not ${nodeArg}.`);
    return 2;
  }
  const nodes = only === undefined ? cluster.nodes : [cluster.node(only)];
  if (name === 'start' || name === 'restart') {
    requireJava();
    if (name === 'restart') await Promise.all(nodes.map((node) => node.stop()));
    const began = Date.now();
    console.log(
      `Starting ${only === undefined ? 'the cluster' : `broker ${only}`} (data in ${cluster.dataDir}) ...`,
    );
    await Promise.all(nodes.filter((node) => !node.isRunning()).map((node) => node.start()));
    await cluster.waitUntilReady(readyTimeoutMs * 2);
    const seconds = ((Date.now() - began) / 1000).toFixed(1);
    console.log(`Kafka cluster ready at ${cluster.brokers.join(',')} (took ${seconds} s).`);
    return 0;
  }
  const subcommand = subcommands[name];
  if (!subcommand) return kafkaCommand([name]);
  let code = 0;
  for (const node of nodes) {
    console.log(`-- broker ${node.cluster?.nodeId} (${node.brokers.join(',')})`);
    code = Math.max(
      code,
      await subcommand(
        node,
        args.filter((arg) => arg === '-f' || arg === '--follow'),
      ),
    );
  }
  return code;
}

async function startAndWait(broker: KafkaBroker, verb: string): Promise<number> {
  requireJava(); // before printing "Starting", so a missing JDK is the only thing the user sees
  const began = Date.now();
  console.log(`Starting Kafka (${verb}) at ${broker.brokers.join(',')}, data in ${broker.dataDir} ...`);
  await broker.start();
  await broker.waitUntilReady(readyTimeoutMs);
  const seconds = ((Date.now() - began) / 1000).toFixed(1);
  console.log(`Kafka is ready at ${broker.brokers.join(',')} (took ${seconds} s, pid ${broker.pid}).`);
  console.log(`Log: ${broker.logFile}`);
  return 0;
}

function portFromEnv(variable: string, fallback: number): number {
  const raw = process.env[variable];
  if (raw === undefined || raw === '') return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`${variable}=${raw} is not a valid TCP port; use a number between 1 and 65535.`);
  }
  return port;
}
