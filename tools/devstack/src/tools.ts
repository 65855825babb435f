import { spawnSync } from 'node:child_process';

/** Raised when a required command-line tool is missing; the message says how to install it. */
export class MissingToolError extends Error {
  override name = 'MissingToolError';
}

/**
 * Checks that `java` (17+, which Kafka 4.x requires) is on PATH. Cheap enough to call before
 * every broker start, and it turns a cryptic spawn ENOENT into an actionable message.
 */
export function requireJava(): void {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) {
    throw new MissingToolError(
      'java was not found on PATH. The local Kafka broker needs a JDK/JRE 17 or newer: ' +
        'on Debian/Ubuntu run `apt-get install -y openjdk-17-jre-headless`, or set PATH to include a JDK.',
    );
  }
  // `java -version` prints to stderr, e.g. 'openjdk version "17.0.15" 2025-04-15'.
  const major = Number(/version "(?:1\.)?(\d+)/.exec(result.stderr)?.[1]);
  if (Number.isFinite(major) && major < 17) {
    throw new MissingToolError(
      `java ${major} is on PATH, but Kafka 4.x needs Java 17 or newer. Install openjdk-17 and put it first on PATH.`,
    );
  }
}

/** Checks that Maven is on PATH; only needed the first time, to download the broker's jars. */
export function requireMaven(): void {
  const result = spawnSync('mvn', ['-v'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) {
    throw new MissingToolError(
      'mvn (Apache Maven) was not found on PATH. It downloads the Kafka broker jars from Maven Central ' +
        'once: on Debian/Ubuntu run `apt-get install -y maven`.',
    );
  }
}
