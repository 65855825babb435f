import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fixKafkajsIdleTimerLoop } from '@outbox/runtime/kafka/kafkajs';
import type { Admin } from 'kafkajs';
import { KafkaBroker, randomClusterId } from './kafkaBroker.ts';
import { withKafkaAdmin } from './kafkaProbe.ts';
import { localDir } from './paths.ts';
import { eventually } from './processes.ts';

type KafkaClusterOptions = {
  /** Names the default data dir, `.local/kafka/<name>`. Default 'cluster'. */
  name?: string;
  /** Holds one data dir per node (`node-1`…) and the cluster id. Kept across restarts. */
  dataDir?: string;
  /**
   * Each node's client and controller port, node 1 first. Default: 19192/19193, 19292/19293,
   * 19392/19393 (the demo cluster: below the ephemeral port range, which starts at 32768 on Linux,
   * so no outgoing connection holds one of them); tests pass free ports.
   */
  ports?: { port: number; controllerPort: number }[];
};

const defaultPorts = [1, 2, 3].map((n) => ({ port: 19_092 + 100 * n, controllerPort: 19_093 + 100 * n }));

/**
 * Three real Kafka brokers in KRaft mode, each also a controller (the quorum survives the loss of
 * one), from the same Maven jars as the single broker: topics at replication factor 3 with
 * `min.insync.replicas=2` and no unclean leader election (kafkaServerProperties.ts). One node can
 * be killed and started again while the other two carry on, which is what the failover tests and
 * `./dev demo --cluster` do.
 *
 * Like KafkaBroker, every node is a detached JVM found again through its pid file, so any process
 * that builds a KafkaCluster with the same data dir can stop or kill its nodes.
 */
export class KafkaCluster {
  readonly dataDir: string;
  readonly nodes: KafkaBroker[];

  constructor(options: KafkaClusterOptions = {}) {
    this.dataDir = resolve(options.dataDir ?? join(localDir, 'kafka', options.name ?? 'cluster'));
    const ports = options.ports ?? defaultPorts;
    const quorumVoters = ports
      .map(({ controllerPort }, i) => `${i + 1}@127.0.0.1:${controllerPort}`)
      .join(',');
    const clusterId = this.#clusterId();
    this.nodes = ports.map(
      ({ port, controllerPort }, i) =>
        new KafkaBroker({
          port,
          controllerPort,
          dataDir: join(this.dataDir, `node-${i + 1}`),
          heapMb: 512, // three of them on a 2-core, 24 GB machine
          clusterId,
          cluster: { nodeId: i + 1, quorumVoters },
        }),
    );
  }

  /** Bootstrap servers: every node, so a client starts whichever of them is down. */
  get brokers(): string[] {
    return this.nodes.flatMap((node) => node.brokers);
  }

  /** The node with this id (1-based, as Kafka numbers them). */
  node(nodeId: number): KafkaBroker {
    const node = this.nodes[nodeId - 1];
    if (!node) throw new Error(`The cluster has nodes 1 to ${this.nodes.length}, not ${nodeId}.`);
    return node;
  }

  /** Some node runs (a demo that finds one running uses the cluster as it is). */
  isRunning(): boolean {
    return this.nodes.some((node) => node.isRunning());
  }

  /** Starts every node that is not running; call waitUntilReady() afterwards. */
  async start(): Promise<void> {
    await this.nodes[0]?.ensureJars();
    // All at once: a node cannot finish starting before a majority of the controllers runs.
    await Promise.all(this.nodes.filter((node) => !node.isRunning()).map((node) => node.start()));
  }

  /**
   * Every running node serves metadata and the cluster lists them all as brokers; resolves with the
   * milliseconds waited.
   */
  async waitUntilReady(timeoutMs = 180_000): Promise<number> {
    const started = Date.now();
    const running = this.nodes.filter((node) => node.isRunning());
    await Promise.all(running.map((node) => node.waitUntilReady(timeoutMs)));
    let registered: number[] = [];
    const everyNodeListed = async () => {
      registered = await this.registeredNodeIds().catch((): number[] => []);
      return running.every((node) => registered.includes(node.cluster?.nodeId ?? -1)) || undefined;
    };
    const waiting = () => `every running node listed as a broker (the cluster lists [${registered}])`;
    await eventually(waiting, everyNodeListed, started + timeoutMs - Date.now(), 250);
    return Date.now() - started;
  }

  /** The node ids the cluster's metadata lists as brokers now. */
  async registeredNodeIds(): Promise<number[]> {
    return this.#withAdmin(async (admin) => (await admin.describeCluster()).brokers.map((b) => b.nodeId));
  }

  /** Each partition of these topics with the node leading it now (-1: none) and its in-sync replicas. */
  async partitionLeaders(
    topics: string[],
  ): Promise<{ topic: string; partition: number; leader: number; isr: number[] }[]> {
    return this.#withAdmin(async (admin) => {
      const metadata = await admin.fetchTopicMetadata({ topics });
      return metadata.topics.flatMap(({ name, partitions }) =>
        partitions.map((p) => ({ topic: name, partition: p.partitionId, leader: p.leader, isr: p.isr })),
      );
    });
  }

  /** The node leading a partition now, by the cluster's metadata. */
  async leaderOf(topic: string, partition: number): Promise<number> {
    const leader = (await this.partitionLeaders([topic])).find((p) => p.partition === partition)?.leader;
    if (leader === undefined || leader < 0) throw new Error(`${topic}[${partition}] has no leader now.`);
    return leader;
  }

  /** Graceful stop of every node. */
  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.stop()));
  }

  async #withAdmin<T>(work: (admin: Admin) => Promise<T>): Promise<T> {
    fixKafkajsIdleTimerLoop();
    const brokers = this.nodes.filter((node) => node.isRunning()).flatMap((node) => node.brokers);
    const timeouts = {
      connectionTimeout: 1000,
      requestTimeout: 3000,
      retry: { retries: 2, initialRetryTime: 200 },
    };
    return withKafkaAdmin(brokers, work, timeouts);
  }

  /** One id for all nodes, kept beside them: a node formatted later must join the same cluster. */
  #clusterId(): string {
    const file = join(this.dataDir, 'cluster-id');
    if (existsSync(file)) return readFileSync(file, 'utf8').trim();
    mkdirSync(this.dataDir, { recursive: true });
    const id = randomClusterId();
    writeFileSync(file, `${id}\n`);
    return id;
  }
}
