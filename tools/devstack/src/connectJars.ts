import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { kafkaVersion } from './kafkaJars.ts';
import { copyDependencies } from './maven.ts';
import { localDir, repoRoot } from './paths.ts';
import { requireMaven } from './tools.ts';

/** The pom of the Connect worker and Debezium's PostgreSQL connector (tools/devstack/connect/pom.xml). */
export const connectPom = resolve(repoRoot, 'tools/devstack/connect/pom.xml');
export const connectLog4jConfig = resolve(repoRoot, 'tools/devstack/connect/log4j2.properties');
/** Apart from the broker's lib/: Connect brings Jetty, Jersey and Debezium, which the broker does not need. */
export const connectLibDir = resolve(localDir, 'connect/lib');

const markerName = '.connect-versions';

export type ConnectVersions = { kafka: string; debezium: string };

export function connectVersions(): ConnectVersions {
  const pom = readFileSync(connectPom, 'utf8');
  const property = (name: string) => {
    const value = new RegExp(`<${name}>([^<]+)</${name}>`).exec(pom)?.[1]?.trim();
    if (!value) throw new Error(`${connectPom} has no <${name}> property; restore it from git.`);
    return value;
  };
  return { kafka: property('kafka.version'), debezium: property('debezium.version') };
}

/** The classpath argument for `java -cp`: every jar in the lib dir. */
export function connectClasspath(): string {
  return join(connectLibDir, '*');
}

/**
 * Makes sure the worker's jars are in .local/connect/lib, downloading them with Maven only when
 * they are missing or a version in the pom changed (70 jars, 41 MB, once). Like the broker's, the
 * download goes to a staging folder renamed into place, so an interrupted one leaves nothing behind.
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
  const marker = `${versions.kafka} ${versions.debezium}`;
  if (jarsPresent(marker, versions)) return { libDir: connectLibDir, versions };

  requireMaven();
  const staging = `${connectLibDir}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    await copyDependencies(connectPom, staging, 'the Kafka Connect and Debezium jars');
    for (const jar of expectedJars(versions)) {
      if (!existsSync(join(staging, jar))) {
        throw new Error(`Maven finished but ${jar} is not in ${staging}; check ${connectPom}.`);
      }
    }
    writeFileSync(join(staging, markerName), `${marker}\n`);
    if (jarsPresent(marker, versions)) return { libDir: connectLibDir, versions }; // a parallel process was faster
    rmSync(connectLibDir, { recursive: true, force: true });
    renameSync(staging, connectLibDir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return { libDir: connectLibDir, versions };
}

function expectedJars(versions: ConnectVersions): string[] {
  return [`connect-runtime-${versions.kafka}.jar`, `debezium-connector-postgres-${versions.debezium}.jar`];
}

function jarsPresent(marker: string, versions: ConnectVersions): boolean {
  try {
    return (
      readFileSync(join(connectLibDir, markerName), 'utf8').trim() === marker &&
      expectedJars(versions).every((jar) => existsSync(join(connectLibDir, jar)))
    );
  } catch {
    return false;
  }
}
