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

/**
 * What a command acts on: the demo broker, or the demo cluster's nodes (every one, or the one
 * `--node N` names). Every CLI invocation builds the same ones and finds a running JVM via its pid file.
 */
type Target = { nodes: KafkaBroker[]; cluster: KafkaCluster | undefined };

const subcommands: Record<string, (target: Target, args: string[]) => Promise<number>> = {
  start: (target) => startAndWait(target, false),
  restart: (target) => startAndWait(target, true),
  stop: (target) =>
    eachNode(target, async (node) => {
      const pid = node.pid;
      console.log((await node.stop()) ? `Kafka stopped (was pid ${pid}).` : 'Kafka is not running.');
      return 0;
    }),
  kill: (target) =>
    eachNode(target, async (node) => {
      const pid = node.pid;
      const again = target.cluster ? `start --cluster --node ${node.cluster?.nodeId}` : 'start';
      console.log(
        (await node.kill())
          ? `Kafka killed with SIGKILL (was pid ${pid}). \`./dev kafka ${again}\` recovers its data.`
          : 'Kafka is not running.',
      );
      return 0;
    }),
  status: (target) =>
    eachNode(target, async (node) => {
      const pid = node.pid;
      if (pid === undefined) {
        console.log(`Kafka is not running (data dir ${node.dataDir}).`);
        return 1;
      }
      try {
        await probeKafka(node.brokers, 3000);
        console.log(`Kafka is running (pid ${pid}) and ready at ${node.brokers.join(',')}.`);
        console.log(`  data: ${node.dataDir}\n  log:  ${node.logFile}`);
        return 0;
      } catch (error) {
        console.log(
          `Kafka is running (pid ${pid}) but not answering at ${node.brokers.join(',')}: ${(error as Error).message}`,
        );
        console.log(`It may still be starting; see \`npm run kafka logs\`.`);
        return 1;
      }
    }),
  async logs({ nodes }, args) {
    const files = nodes.map((node) => node.logFile);
    if (args.includes('-f') || args.includes('--follow')) {
      // tail -F keeps following across restarts, which append to the same file.
      const tail = spawn('tail', ['-n', '100', '-F', ...files], { stdio: 'inherit' });
      return new Promise((resolve) => tail.once('exit', (code) => resolve(code ?? 0)));
    }
    return eachNode({ nodes, cluster: undefined }, async (node) => {
      const text = tailFile(node.logFile, 200);
      console.log(text === '' ? `No broker log yet at ${node.logFile}.` : text);
      return 0;
    });
  },
};

export async function kafkaCommand(args: string[]): Promise<number> {
  const [name, ...rest] = args;
  const subcommand = name === undefined ? undefined : subcommands[name];
  if (subcommand === undefined) {
    const help = name === undefined || name === 'help' || name === '--help';
    if (!help) console.error(`Unknown kafka command "${name}".\n`);
    console.error(usage);
    return help ? 0 : 2;
  }
  if (!rest.includes('--cluster')) {
    const broker = new KafkaBroker({
      name: 'demo',
      port: portFromEnv('KAFKA_PORT', 9092),
      controllerPort: portFromEnv('KAFKA_CONTROLLER_PORT', 9093),
    });
    return subcommand({ nodes: [broker], cluster: undefined }, rest);
  }
  const cluster = new KafkaCluster({ name: 'cluster' });
  const nodeArg = rest[rest.indexOf('--node') + 1];
  const only = rest.includes('--node') ? Number(nodeArg) : undefined;
  if (only !== undefined && !(only >= 1 && only <= cluster.nodes.length)) {
    console.error(`--node takes 1 to ${cluster.nodes.length}, not ${nodeArg}.`);
    return 2;
  }
  return subcommand({ nodes: only === undefined ? cluster.nodes : [cluster.node(only)], cluster }, rest);
}

/** Runs `command` on each node; on the cluster, under a line that names the node. */
async function eachNode(
  { nodes, cluster }: Target,
  command: (node: KafkaBroker) => Promise<number>,
): Promise<number> {
  let code = 0;
  for (const node of nodes) {
    if (cluster) console.log(`-- broker ${node.cluster?.nodeId} (${node.brokers.join(',')})`);
    code = Math.max(code, await command(node));
  }
  return code;
}

/** Starts the nodes that are not running (after stopping them all, for `restart`), and waits until they serve. */
async function startAndWait({ nodes, cluster }: Target, restart: boolean): Promise<number> {
  requireJava(); // before printing "Starting", so a missing JDK is the only thing the user sees
  if (restart && (await Promise.all(nodes.map((node) => node.stop()))).some(Boolean))
    console.log('Kafka stopped.');
  const brokers = (cluster ?? nodes[0])?.brokers.join(',');
  const idle = nodes.filter((node) => !node.isRunning());
  if (idle.length === 0) {
    console.log(`Kafka is already running at ${brokers}.`);
    return 0;
  }
  const began = Date.now();
  const dataDir = cluster?.dataDir ?? nodes[0]?.dataDir;
  console.log(`Starting Kafka at ${idle.flatMap((node) => node.brokers).join(',')}, data in ${dataDir} ...`);
  await Promise.all(idle.map((node) => node.start()));
  if (cluster) await cluster.waitUntilReady(readyTimeoutMs * 2);
  else await Promise.all(idle.map((node) => node.waitUntilReady(readyTimeoutMs)));
  const seconds = ((Date.now() - began) / 1000).toFixed(1);
  console.log(`Kafka is ready at ${brokers} (took ${seconds} s).`);
  console.log(`Log: ${idle.map((node) => node.logFile).join(', ')}`);
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
