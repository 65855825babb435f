import { join, resolve } from 'node:path';
import { ensureJars, pomProperty } from './maven.ts';
import { localDir, repoRoot } from './paths.ts';

/** The pom that pins the broker version; its `<kafka.version>` is the single source of truth. */
const kafkaPom = resolve(repoRoot, 'infra/kafka/pom.xml');
export const kafkaLog4jConfig = resolve(repoRoot, 'infra/kafka/log4j2.properties');
/** Shared by every broker (demo and tests): the jars are the same, only data dirs differ. */
const kafkaLibDir = resolve(localDir, 'kafka/lib');

export function kafkaVersion(): string {
  return pomProperty(kafkaPom, 'kafka.version');
}

/** The classpath argument for `java -cp`: every jar in the lib dir (Java expands the wildcard). */
export const kafkaClasspath = join(kafkaLibDir, '*');

/**
 * Makes sure the broker jars for the pom's Kafka version are in .local/kafka/lib, downloading
 * them with Maven only when they are missing or the version changed (about 10 s, 44 MB, once).
 */
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
