import { spawn } from 'node:child_process';

/**
 * `mvn dependency:copy-dependencies` on a pom that only declares what to download: how the Kafka
 * broker's jars (kafkaJars.ts) and Zipkin's server (zipkinServer.ts) get here from Maven Central.
 * `what` names the download in the error message ("the Kafka jars").
 */
export function copyDependencies(pom: string, outputDirectory: string, what: string): Promise<void> {
  const args = [
    '-q',
    '-B',
    '-f',
    pom,
    'dependency:copy-dependencies',
    '-DincludeScope=runtime',
    `-DoutputDirectory=${outputDirectory}`,
  ];
  return new Promise((resolvePromise, reject) => {
    const child = spawn('mvn', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolvePromise();
      else
        reject(
          new Error(
            `Downloading ${what} failed (mvn exited with ${code}). Maven Central must be reachable; ` +
              `retry, or run \`mvn ${args.join(' ')}\` yourself to see the full error.\n${output.slice(-4000)}`,
          ),
        );
    });
  });
}
