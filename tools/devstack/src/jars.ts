import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { localDir, repoRoot } from './paths.ts';
import { run } from './processes.ts';
import { requireMaven } from './tools.ts';

// The stack's JVMs run from Maven Central's jars: each from a pom that only declares what to
// download, whose properties pin the versions (the single source of truth), into a lib folder of its
// own under .local/ that every process shares (the demo's and the tests'; only data dirs differ).

const kafkaPom = resolve(repoRoot, 'infra/kafka/pom.xml');
/** The Connect worker and Debezium's PostgreSQL connector. */
const connectPom = resolve(repoRoot, 'tools/devstack/connect/pom.xml');
const zipkinPom = resolve(repoRoot, 'tools/devstack/zipkin/pom.xml');
const kafkaLibDir = resolve(localDir, 'kafka/lib');
/** Apart from the broker's lib/: Connect brings Jetty, Jersey and Debezium, which the broker does not need. */
const connectLibDir = resolve(localDir, 'connect/lib');
const zipkinLibDir = resolve(localDir, 'zipkin/lib');

export const kafkaLog4jConfig = resolve(repoRoot, 'infra/kafka/log4j2.properties');
export const connectLog4jConfig = resolve(repoRoot, 'tools/devstack/connect/log4j2.properties');
/** The classpath arguments for `java -cp`: every jar in the lib dir (Java expands the wildcard). */
export const kafkaClasspath = join(kafkaLibDir, '*');
export const connectClasspath = join(connectLibDir, '*');

export function kafkaVersion(): string {
  return pomProperty(kafkaPom, 'kafka.version');
}

type ConnectVersions = { kafka: string; debezium: string };

export function connectVersions(): ConnectVersions {
  return {
    kafka: pomProperty(connectPom, 'kafka.version'),
    debezium: pomProperty(connectPom, 'debezium.version'),
  };
}

export function zipkinVersion(): string {
  return pomProperty(zipkinPom, 'zipkin.version');
}

/** The broker's jars in .local/kafka/lib (about 10 s, 44 MB, once). */
export async function ensureKafkaJars(): Promise<{ libDir: string; version: string }> {
  const version = kafkaVersion();
  await ensureJars({
    pom: kafkaPom,
    libDir: kafkaLibDir,
    jars: [`kafka_2.13-${version}.jar`],
    marker: '.kafka-version',
    versions: version,
    what: 'the Kafka jars',
  });
  return { libDir: kafkaLibDir, version };
}

/**
 * The worker's jars in .local/connect/lib (70 jars, 41 MB, once). The worker's Kafka must be the
 * broker's: the pom says which, and a mismatch is refused here.
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

/** Zipkin's server, one jar, in .local/zipkin/lib (about 130 MB, once); returns its path. */
export async function ensureZipkinJar(): Promise<string> {
  const version = zipkinVersion();
  const jar = `zipkin-server-${version}-exec.jar`;
  await ensureJars({
    pom: zipkinPom,
    libDir: zipkinLibDir,
    jars: [jar],
    marker: '.zipkin-version',
    versions: version,
    what: "Zipkin's server jar",
  });
  return join(zipkinLibDir, jar);
}

/** A `<name>` property of a pom that pins a version: the single source of truth for that version. */
function pomProperty(pom: string, name: string): string {
  const value = new RegExp(`<${name}>([^<]+)</${name}>`).exec(readFileSync(pom, 'utf8'))?.[1]?.trim();
  if (!value) throw new Error(`${pom} has no <${name}> property; restore it from git.`);
  return value;
}

/**
 * What a lib folder must hold: the pom's download, the jars that prove it complete, and the
 * versions it is of, written to the `marker` file once the download is complete.
 */
type JarSet = {
  pom: string;
  libDir: string;
  jars: string[];
  marker: string;
  versions: string;
  what: string;
};

/**
 * Makes sure `libDir` holds the pom's dependencies at `versions`, downloading them with Maven only
 * when they are missing or a version changed. Maven copies into a staging folder renamed into place
 * only after it succeeded, so an interrupted download never leaves a half-filled classpath behind,
 * and a version bump never leaves two versions side by side in lib/ (which fails obscurely).
 */
async function ensureJars({ pom, libDir, jars, marker, versions, what }: JarSet): Promise<void> {
  const present = () => {
    try {
      return (
        readFileSync(join(libDir, marker), 'utf8').trim() === versions &&
        jars.every((jar) => existsSync(join(libDir, jar)))
      );
    } catch {
      return false;
    }
  };
  if (present()) return;
  requireMaven();
  const staging = `${libDir}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    await copyDependencies(pom, staging, what);
    for (const jar of jars) {
      if (!existsSync(join(staging, jar))) {
        throw new Error(`Maven finished but ${jar} is not in ${staging}; check ${pom}.`);
      }
    }
    writeFileSync(join(staging, marker), `${versions}\n`);
    // Another process (a parallel test file) may have finished first; then its copy is as good as ours.
    if (present()) return;
    rmSync(libDir, { recursive: true, force: true });
    renameSync(staging, libDir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * `mvn dependency:copy-dependencies` on a pom that only declares what to download: how the Kafka
 * broker's jars, the Connect worker's and Zipkin's server get here from Maven Central.
 * `what` names the download in the error message ("the Kafka jars").
 */
async function copyDependencies(pom: string, outputDirectory: string, what: string): Promise<void> {
  const args = ['-q', '-B', '-f', pom, 'dependency:copy-dependencies', '-DincludeScope=runtime'];
  args.push(`-DoutputDirectory=${outputDirectory}`);
  await run('mvn', args, { maxBuffer: 64 * 1024 * 1024 }).catch((error) => {
    throw new Error(
      `Downloading ${what} failed (mvn exited with ${error.code}). Maven Central must be reachable; ` +
        `retry, or run \`mvn ${args.join(' ')}\` yourself to see the full error.\n` +
        `${error.stdout ?? ''}${error.stderr ?? ''}`.slice(-4000),
    );
  });
}
