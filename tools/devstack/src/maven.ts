import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from './processes.ts';
import { requireMaven } from './tools.ts';

/** A `<name>` property of a pom that pins a version: the single source of truth for that version. */
export function pomProperty(pom: string, name: string): string {
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
export async function ensureJars({ pom, libDir, jars, marker, versions, what }: JarSet): Promise<void> {
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
