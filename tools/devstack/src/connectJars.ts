import { join, resolve } from 'node:path';
import { kafkaVersion } from './kafkaJars.ts';
import { ensureJars, pomProperty } from './maven.ts';
import { localDir, repoRoot } from './paths.ts';

/** The pom of the Connect worker and Debezium's PostgreSQL connector (tools/devstack/connect/pom.xml). */
const connectPom = resolve(repoRoot, 'tools/devstack/connect/pom.xml');
export const connectLog4jConfig = resolve(repoRoot, 'tools/devstack/connect/log4j2.properties');
/** Apart from the broker's lib/: Connect brings Jetty, Jersey and Debezium, which the broker does not need. */
const connectLibDir = resolve(localDir, 'connect/lib');

type ConnectVersions = { kafka: string; debezium: string };

export function connectVersions(): ConnectVersions {
  return {
    kafka: pomProperty(connectPom, 'kafka.version'),
    debezium: pomProperty(connectPom, 'debezium.version'),
  };
}

/** The classpath argument for `java -cp`: every jar in the lib dir. */
export const connectClasspath = join(connectLibDir, '*');

/**
 * Makes sure the worker's jars are in .local/connect/lib, downloading them with Maven only when
 * they are missing or a version in the pom changed (70 jars, 41 MB, once), like the broker's.
 * The worker's Kafka must be the broker's: the pom says which, and a mismatch is refused here.
 */
export async function ensureConnectJars(): Promise<{ libDir: string; versions: ConnectVersions }> {
  const versions = connectVersions();
  const brokerVersion = kafkaVersion();
  if (versions.kafka !== brokerVersion) {
    throw new Error(
      `${connectPom} pins Kafka ${versions.kafka} but the broker (infra/kafka/pom.xml) is ${brokerVersion}: ` +
        'set the same <kafka.version> in both, with a Debezium release built against it.',
    );
  }
  await ensureJars({
    pom: connectPom,
    libDir: connectLibDir,
    jars: [`connect-runtime-${versions.kafka}.jar`, `debezium-connector-postgres-${versions.debezium}.jar`],
    marker: '.connect-versions',
    versions: `${versions.kafka} ${versions.debezium}`,
    what: 'the Kafka Connect and Debezium jars',
  });
  return { libDir: connectLibDir, versions };
}
