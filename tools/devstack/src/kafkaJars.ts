import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { copyDependencies } from './maven.ts';
import { localDir, repoRoot } from './paths.ts';
import { requireMaven } from './tools.ts';

/** The pom that pins the broker version; its `<kafka.version>` is the single source of truth. */
export const kafkaPom = resolve(repoRoot, 'infra/kafka/pom.xml');
export const kafkaLog4jConfig = resolve(repoRoot, 'infra/kafka/log4j2.properties');
/** Shared by every broker (demo and tests): the jars are the same, only data dirs differ. */
export const kafkaLibDir = resolve(localDir, 'kafka/lib');

const markerName = '.kafka-version';

export function kafkaVersion(): string {
  const version = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(readFileSync(kafkaPom, 'utf8'))?.[1];
  if (!version) throw new Error(`${kafkaPom} has no <kafka.version> property; restore it from git.`);
  return version.trim();
}

/** The classpath argument for `java -cp`: every jar in the lib dir (Java expands the wildcard). */
export function kafkaClasspath(): string {
  return join(kafkaLibDir, '*');
}

/**
 * Makes sure the broker jars for the pom's Kafka version are in .local/kafka/lib, downloading
 * them with Maven only when they are missing or the version changed (about 10 s, 44 MB, once).
 *
 * Maven copies into a temporary directory that is renamed into place only after it succeeded, so
 * an interrupted download never leaves a half-filled classpath behind, and a version bump never
 * leaves two Kafka versions side by side in lib/ (which would make the broker fail obscurely).
 */
export async function ensureKafkaJars(): Promise<{ libDir: string; version: string }> {
  const version = kafkaVersion();
  if (jarsPresent(version)) return { libDir: kafkaLibDir, version };

  requireMaven();
  const staging = `${kafkaLibDir}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    await copyDependencies(kafkaPom, staging, 'the Kafka jars');
    if (!existsSync(join(staging, `kafka_2.13-${version}.jar`))) {
      throw new Error(
        `Maven finished but kafka_2.13-${version}.jar is not in ${staging}; check ${kafkaPom}.`,
      );
    }
    writeFileSync(join(staging, markerName), `${version}\n`);
    // Another process (a parallel test file) may have finished first; then its copy is as good as ours.
    if (jarsPresent(version)) return { libDir: kafkaLibDir, version };
    rmSync(kafkaLibDir, { recursive: true, force: true });
    renameSync(staging, kafkaLibDir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return { libDir: kafkaLibDir, version };
}

function jarsPresent(version: string): boolean {
  try {
    return (
      readFileSync(join(kafkaLibDir, markerName), 'utf8').trim() === version &&
      existsSync(join(kafkaLibDir, `kafka_2.13-${version}.jar`))
    );
  } catch {
    return false;
  }
}
