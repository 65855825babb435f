// Checks docker-compose.yml, the Dockerfile and the Prometheus/Grafana files without a Docker engine,
// in seconds. What `docker compose config` would reject is caught by the official compose-spec JSON
// schema; what it would accept but still break at run time (an env var an app rejects, a port that
// does not match, a mount of a missing file, an unpinned image, a version that differs from the
// local demo's) is caught by the checks below. The stack itself runs in
// tests/compose/compose.places-an-order-in-the-console.test.ts. See docs/docker.md.

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { TRACE_ID_LABEL } from '@outbox/runtime/exemplars';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const fromRoot = (...segments: string[]) => path.join(root, ...segments);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Service = {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  ports?: (string | number | { target: number; published?: string | number })[];
  volumes?: (string | { type: string; source?: string; target: string })[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test?: string | string[]; disable?: boolean };
  deploy?: { resources?: { limits?: { memory?: string } } };
  mem_limit?: string;
  restart?: string;
  [extension: `x-${string}`]: unknown;
};
type ComposeFile = { version?: string; services: Record<string, Service> };

// Compose resolves YAML merge keys (`<<: *anchor`) before validating; so does this parse.
const loadYaml = (file: string): unknown => parseYaml(readFileSync(fromRoot(file), 'utf8'), { merge: true });
const compose = loadYaml('docker-compose.yml') as ComposeFile;
const services = Object.entries(compose.services);

/**
 * The web console owns no database and writes nothing: it reads the others' databases as the
 * read-only `console` role. Every other app service owns (or, a relay, drains) one database.
 */
const CONSOLE = 'console';
const ownsDatabase = ([name]: [string, Service]) => name !== CONSOLE;

const TRACING_REGISTER = '@outbox/runtime/tracing-register';

/**
 * The app a service runs, from its command `node --import @outbox/runtime/tracing-register
 * apps/<app>/src/main.ts` (undefined if not that shape). The --import loads OpenTelemetry's hooks
 * before the app, as `npm start` and the demo do (docs/tracing.md).
 */
function appOf(service: Service): string | undefined {
  const command = commandOf(service);
  const match =
    command.length === 4 &&
    command[0] === 'node' &&
    command[1] === '--import' &&
    command[2] === TRACING_REGISTER
      ? /^apps\/([\w-]+)\/src\/main\.ts$/.exec(command[3] ?? '')
      : null;
  return match?.[1] ?? undefined;
}

/** The image of every app, built from the root Dockerfile (scripts/compose/buildContexts.ts stages its context). */
const APP_IMAGE = 'outbox-reference-app:local';

/** The app services: those that run an app of apps/ from the app image. */
const appServices = services.filter(([, service]) => service.image === APP_IMAGE && appOf(service));

/** The database a service's DATABASE_URL names. */
const databaseOf = (service: Service) =>
  new URL(environmentOf(service).DATABASE_URL ?? 'postgresql://invalid/').pathname.slice(1);

function environmentOf(service: Service): Record<string, string> {
  const entries = Array.isArray(service.environment)
    ? service.environment.map((line) => {
        const separator = line.indexOf('=');
        return [line.slice(0, separator), line.slice(separator + 1)] as const;
      })
    : Object.entries(service.environment ?? {});
  return Object.fromEntries(
    entries.filter(([, value]) => value !== null).map(([k, v]) => [k, withDefaults(String(v))]),
  );
}

/**
 * A value as Compose interpolates it when the variables it names are not set in the shell:
 * `${VAR:-default}` becomes its default (defaults may nest), which is what an app sees by default.
 */
function withDefaults(value: string): string {
  let previous: string;
  let current = value;
  do {
    previous = current;
    current = current.replace(/\$\{[A-Z0-9_]+:-([^${}]*)\}/g, '$1');
  } while (current !== previous);
  return current;
}

function commandOf(service: Service): string[] {
  if (service.command === undefined) return [];
  return typeof service.command === 'string' ? service.command.split(/\s+/) : service.command;
}

/** [host port, container port] of each published port (short syntax `[ip:]host:container[/proto]`). */
function publishedPorts(service: Service): [number, number][] {
  return (service.ports ?? []).map((port) => {
    if (typeof port === 'object') return [Number(port.published ?? port.target), port.target];
    const parts = String(port)
      .replace(/\/(tcp|udp)$/, '')
      .split(':');
    return [Number(parts.at(-2) ?? parts.at(-1)), Number(parts.at(-1))];
  });
}

function healthcheckCommand(service: Service): string {
  const test = service.healthcheck?.test ?? [];
  return typeof test === 'string' ? test : test.join(' ');
}

/** The compose-spec JSON schema, as shipped in the dclint package (see docs/docker.md). */
function composeSpecSchema(): Record<string, unknown> {
  const dclintManifest = createRequire(import.meta.url).resolve('dclint/package.json');
  const schemaFile = path.join(path.dirname(dclintManifest), 'schemas', 'compose.schema.json');
  return JSON.parse(readFileSync(schemaFile, 'utf8'));
}

describe('docker-compose.yml', () => {
  it('is valid against the compose-spec JSON schema', () => {
    const { $schema: _draft07, ...schema } = composeSpecSchema();
    // The schema is draft-07, Ajv's default draft; its `$schema` URL spelling is not one Ajv knows,
    // hence dropped. strict: false because the schema uses `deprecated` and union types.
    const ajv = new Ajv({ allErrors: true, strict: false });
    const validate = ajv.compile(schema);
    const valid = validate(compose);
    const errors = (validate.errors ?? []).map(
      (e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`,
    );
    expect(errors).toEqual([]);
    expect(valid).toBe(true);
  });

  it('has no obsolete top-level `version` key', () => {
    expect(compose).not.toHaveProperty('version');
  });

  it('pins every pulled image to at least a minor version (never `latest`)', () => {
    // An image a service of this file builds (the app image) is not pulled.
    const built = new Set(
      services.filter(([, service]) => service.build).map(([, service]) => service.image),
    );
    const unpinned = services
      .filter(([, service]) => service.build === undefined && !built.has(service.image))
      .filter(([, service]) => {
        const reference = service.image ?? '';
        const tag = reference.split('/').at(-1)?.split('@')[0]?.split(':')[1];
        return tag === undefined || tag === 'latest' || !/\d+\.\d+/.test(tag);
      })
      .map(([name, service]) => `${name}: ${service.image ?? '(no image)'}`);
    expect(unpinned).toEqual([]);
  });

  it("builds every image here but Grafana's, each tagged with the version the local demo runs", async () => {
    const { connectVersions, kafkaVersion, zipkinVersion } = await import('@outbox/devstack/jars');
    const built = Object.fromEntries(
      services.filter(([, service]) => service.build).map(([name, service]) => [name, service.image]),
    );
    expect(built).toEqual({
      postgres: 'outbox-reference-postgres:15',
      kafka: `outbox-reference-kafka:${kafkaVersion()}`,
      orders: APP_IMAGE,
      connect: `outbox-reference-connect:${connectVersions().debezium.replace(/\.Final$/, '')}`,
      prometheus: 'outbox-reference-prometheus:2.42',
      zipkin: `outbox-reference-zipkin:${zipkinVersion()}`,
    });
    // The rest run an image built above, except Grafana: no reachable registry has it.
    const builtImages = new Set(Object.values(built));
    const pulled = services.filter(([, service]) => !service.build && !builtImages.has(service.image));
    expect(pulled.map(([name]) => name)).toEqual(['grafana']);
    expect((compose.services.grafana as { profiles?: string[] }).profiles).toEqual(['grafana']);
  });

  it("builds the Java images from contexts staged with the local stack's jars, the others from infra/docker", () => {
    const contextOf = (name: string) => {
      const build = compose.services[name]?.build;
      return typeof build === 'string' ? build : build?.context;
    };
    for (const name of ['kafka', 'connect', 'zipkin']) {
      expect(contextOf(name)).toBe(`.local/compose/${name}`);
      expect(existsSync(fromRoot('infra/docker', name, 'Dockerfile'))).toBe(true);
    }
    for (const name of ['postgres', 'prometheus']) {
      expect(contextOf(name)).toBe(`infra/docker/${name}`);
      expect(existsSync(fromRoot(contextOf(name) ?? '', 'Dockerfile'))).toBe(true);
    }
    expect(contextOf('orders')).toBe('.local/compose/app');
  });

  it('gives every service a healthcheck (or an `x-healthcheck-exempt` reason)', () => {
    const missing = services
      .filter(([, service]) => !service.healthcheck?.test || service.healthcheck.disable === true)
      .filter(([, service]) => {
        const reason = service['x-healthcheck-exempt'];
        return typeof reason !== 'string' || reason.trim() === '';
      })
      .map(([name]) => name);
    expect(missing).toEqual([]);
  });

  it('gives every service a memory limit', () => {
    const unlimited = services
      .filter(([, service]) => !service.deploy?.resources?.limits?.memory && !service.mem_limit)
      .map(([name]) => name);
    expect(unlimited).toEqual([]);
  });

  it('restarts every long-running service unless stopped, and no one-shot', () => {
    // A one-shot has no healthcheck of its own to wait on (it is exempt): it runs to completion once.
    const oneShot = (service: Service) => typeof service['x-healthcheck-exempt'] === 'string';
    const wrong = services
      .filter(([, service]) =>
        oneShot(service) ? service.restart !== 'no' : service.restart !== 'unless-stopped',
      )
      .map(([name, service]) => `${name}: ${service.restart ?? 'no restart policy'}`);
    expect(wrong).toEqual([]);
  });

  it('makes every depends_on wait for a condition, on a service that can report it', () => {
    const problems: string[] = [];
    for (const [name, service] of services) {
      const dependsOn = service.depends_on ?? {};
      if (Array.isArray(dependsOn)) {
        problems.push(`${name}: depends_on is a plain list; use { <service>: { condition: ... } }`);
        continue;
      }
      for (const [target, { condition }] of Object.entries(dependsOn)) {
        const dependency = compose.services[target];
        if (!dependency) problems.push(`${name}: depends on unknown service ${target}`);
        else if (!condition) problems.push(`${name}: depends on ${target} without a condition`);
        else if (condition === 'service_healthy' && !dependency.healthcheck?.test)
          problems.push(`${name}: waits for ${target} to be healthy, but ${target} has no healthcheck`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('mounts only files and folders that exist in the repository', () => {
    const missing: string[] = [];
    for (const [name, service] of services) {
      for (const volume of service.volumes ?? []) {
        const source =
          typeof volume === 'string' ? volume.split(':')[0] : volume.type === 'bind' && volume.source;
        // A source that is not a path is a named volume, not a file of the repository.
        if (!source || !/^\.{0,2}\//.test(source)) continue;
        if (!existsSync(path.resolve(root, source))) missing.push(`${name}: ${source}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('runs every app under apps/: the relay three times, once per service database, the others once', () => {
    const appFolders = readdirSync(fromRoot('apps')).filter((dir) =>
      existsSync(fromRoot('apps', dir, 'src')),
    );
    const servicesByApp = Map.groupBy(appServices, ([, service]) => appOf(service) ?? '(no app command)');
    expect([...servicesByApp.keys()].sort()).toEqual(appFolders.sort());
    for (const [app, ofApp] of servicesByApp) {
      if (app === 'relay') continue;
      // A service that owns a database is named after its app: one process, one database.
      expect(ofApp.map(([name]) => name)).toEqual([app]);
    }
    // One relay per service database: each drains a different one, and every service database has one.
    const relayDatabases = (servicesByApp.get('relay') ?? []).map(([, service]) => databaseOf(service));
    const serviceDatabases = appServices
      .filter(ownsDatabase)
      .filter(([, service]) => appOf(service) !== 'relay')
      .map(([, service]) => databaseOf(service));
    expect(relayDatabases).toHaveLength(3);
    expect(relayDatabases.sort()).toEqual(serviceDatabases.sort());
  });

  it('runs the same processes as the local demo (planStack in @outbox/devstack), and the console', async () => {
    const { planStack } = await import('@outbox/devstack/stack-plan');
    const plan = planStack({
      databaseUrls: { orders: 'x://h/orders', inventory: 'x://h/inventory', billing: 'x://h/billing' },
      kafkaBrokers: ['kafka:19092'],
    }) as Record<string, { app: string; env: Record<string, string> }>;
    const summary = (app: string | undefined, env: Record<string, string>) => ({
      app,
      database: (env.DATABASE_URL ?? '').split('/').at(-1),
      relayId: env.RELAY_ID?.replace('-{hostname}', ''),
    });
    // The demo runs the console inside its own process (scripts/demo.ts), with the process controls.
    expect(
      Object.fromEntries(
        appServices
          .filter(ownsDatabase)
          .map(([name, service]) => [name, summary(appOf(service), environmentOf(service))]),
      ),
    ).toEqual(Object.fromEntries(Object.entries(plan).map(([name, p]) => [name, summary(p.app, p.env)])));
    expect(appServices.map(([name]) => name)).toContain(CONSOLE);
  });

  it('runs the CDC mode on demand: Kafka Connect with Debezium, and the connectors the relays report', async () => {
    const { cdcNames } = await import('@outbox/devstack/cdc-relays');
    const connect = compose.services.connect as Service & { profiles?: string[] };
    const register = compose.services['connect-register'] as Service & { profiles?: string[] };
    expect(connect.image).toMatch(/^outbox-reference-connect:\d+\.\d+/);
    expect(connect.profiles).toEqual(['cdc']);
    expect(publishedPorts(connect)).toEqual([[8083, 8083]]);
    expect(register.profiles).toEqual(['cdc']);
    expect(commandOf(register)).toEqual(['node', 'scripts/register-cdc-connectors.ts']);
    expect(existsSync(fromRoot('scripts/register-cdc-connectors.ts'))).toBe(true);
    expect(environmentOf(register).CONNECT_URL).toBe('http://connect:8083');
    // Logical decoding on, so that a service can switch to debezium without a database restart.
    expect(commandOf(compose.services.postgres ?? {})).toEqual(['postgres', '-c', 'wal_level=logical']);
    for (const service of ['orders', 'inventory', 'billing'] as const) {
      const relay = environmentOf(compose.services[`relay-${service}`] ?? {});
      const names = cdcNames(service);
      expect(relay.RELAY_MODE, `relay-${service}`).toBe('polling');
      expect(relay.RELAY_CONNECT_URL).toBe('http://connect:8083');
      expect(relay.RELAY_CONNECTOR).toBe(names.connector);
      expect(relay.RELAY_REPLICATION_SLOT).toBe(names.slot);
      expect(environmentOf(register)[`CDC_DATABASE_URL_${service.toUpperCase()}`]).toMatch(
        new RegExp(`@postgres:5432/${service}$`),
      );
    }
  });

  it('publishes each host port once', () => {
    const hostPorts = services.flatMap(([, service]) => publishedPorts(service).map(([host]) => host));
    expect(hostPorts.length).toBe(new Set(hostPorts).size);
  });
});

describe.each(appServices)('app service %s', (name, service) => {
  const environment = environmentOf(service);
  const app = appOf(service) ?? '(no app command)';

  it('runs the app image, which the staged context builds from the root Dockerfile', () => {
    expect(service.image).toBe(APP_IMAGE);
    const builder = services.filter(([, other]) => other.image === APP_IMAGE && other.build);
    expect(builder.map(([builderName]) => builderName)).toEqual(['orders']);
    const staging = readFileSync(fromRoot('scripts/compose/buildContexts.ts'), 'utf8');
    expect(staging).toContain("cpSync(join(root, 'Dockerfile'), join(context, 'Dockerfile'))");
  });

  it(`starts apps/${app}/src/main.ts, which exists, with the tracing hooks loaded first`, () => {
    expect(commandOf(service)).toEqual(['node', '--import', TRACING_REGISTER, `apps/${app}/src/main.ts`]);
    expect(existsSync(fromRoot('packages', 'runtime', 'src', 'tracingRegister.ts'))).toBe(true);
    expect(existsSync(fromRoot('apps', app, 'src', 'main.ts'))).toBe(true);
  });

  it(`has an environment that apps/${app}'s configSchema accepts, and publishes and probes its PORT`, async () => {
    const { configSchema } = await import(pathToFileURL(fromRoot('apps', app, 'src', 'config.ts')).href);
    const result = configSchema.safeParse(environment);
    expect(result.error?.issues ?? []).toEqual([]);
    const port: number = result.data.PORT;
    expect(environment.PORT, 'PORT is set explicitly, not left to the default').toBe(String(port));
    expect(publishedPorts(service)).toEqual([[port, port]]);
    expect(healthcheckCommand(service)).toContain(`http://127.0.0.1:${port}/healthz`);
  });

  if (name === CONSOLE)
    it('reads each service database as the read-only console role the init script creates', () => {
      const initSql = readFileSync(fromRoot('infra/postgres/init-databases.sql'), 'utf8');
      for (const database of ['orders', 'inventory', 'billing']) {
        const url = new URL(environment[`${database.toUpperCase()}_DATABASE_URL`] ?? '');
        expect(url.hostname).toBe('postgres');
        expect(url.pathname).toBe(`/${database}`);
        expect(url.username).toBe('console');
        expect(initSql).toMatch(new RegExp(`^create role console login password '${url.password}';`, 'm'));
        expect(initSql).toMatch(
          new RegExp(
            `^\\\\connect ${database}\\nalter default privileges for role ${database} in schema public grant select on tables to console;`,
            'm',
          ),
        );
      }
      expect(environment.DATABASE_URL).toBeUndefined();
    });

  if (name !== CONSOLE)
    it('connects to a service database on the compose postgres as its owner, created by the init script', () => {
      const url = new URL(environment.DATABASE_URL ?? '');
      const database = url.pathname.slice(1);
      const initSql = readFileSync(fromRoot('infra/postgres/init-databases.sql'), 'utf8');
      expect(url.hostname).toBe('postgres');
      expect(compose.services.postgres).toBeDefined();
      // Every service owns a database named after it; relay-<service> drains that service's outbox.
      expect(database).toBe(app === 'relay' ? name.replace(/^relay-/, '') : name);
      expect(url.username).toBe(database);
      expect(initSql).toMatch(new RegExp(`^create database ${database} owner ${url.username};`, 'm'));
      expect(initSql).toMatch(
        new RegExp(`^create role ${url.username} login password '${url.password}';`, 'm'),
      );
    });

  // Only the relays: each needs the outbox table that another service's migrations create.
  if (app === 'relay')
    it('starts once the service that migrates its database is healthy', () => {
      const dependsOn = Array.isArray(service.depends_on) ? {} : (service.depends_on ?? {});
      const migrator = appServices.find(
        ([other, otherService]) =>
          other !== name &&
          databaseOf(otherService) === databaseOf(service) &&
          appOf(otherService) !== 'relay',
      );
      expect(migrator, `a service that owns ${databaseOf(service)}`).toBeDefined();
      const [migratorName, migratorService] = migrator ?? ['', {}];
      expect(environmentOf(migratorService).MIGRATE_ON_START).toBe('true');
      expect(dependsOn[migratorName]?.condition).toBe('service_healthy');
      // `{hostname}` makes each replica's lease owner distinct (apps/relay/src/config.ts).
      expect(environment.RELAY_ID).toBe(`${name}-{hostname}`);
    });

  it('reaches Kafka through the listener the broker advertises on the compose network', () => {
    if (environment.KAFKA_BROKERS === undefined) return; // an app without Kafka (none at present)
    const advertised = environmentOf(compose.services.kafka ?? {}).KAFKA_ADVERTISED_LISTENERS ?? '';
    const inNetwork = advertised
      .split(',')
      .map((listener) => listener.replace(/^\w+:\/\//, ''))
      .filter((address) => address.startsWith('kafka:'));
    expect(inNetwork).toHaveLength(1);
    expect(environment.KAFKA_BROKERS.split(',')).toEqual(inNetwork);
  });

  it('exports traces to the compose Zipkin under its own service name, as the local demo does', () => {
    expect(environment.OTEL_SERVICE_NAME).toBe(name);
    expect(environment.OTEL_TRACES_EXPORTER).toBe('zipkin');
    const endpoint = new URL(environment.OTEL_EXPORTER_ZIPKIN_ENDPOINT ?? '');
    expect(compose.services[endpoint.hostname]?.image).toMatch(/^outbox-reference-zipkin:/);
    expect(`${endpoint.port}${endpoint.pathname}`).toBe('9411/api/v2/spans');
  });
});

describe('Dockerfile', () => {
  const dockerfile = readFileSync(fromRoot('Dockerfile'), 'utf8');

  it('starts from the Debian base image and runs the staged Node as a non-root user', () => {
    expect(dockerfile).toMatch(/^ARG BASE_IMAGE=local\/debian:bookworm$/m);
    expect(dockerfile).toMatch(/^FROM \$\{BASE_IMAGE\}$/m);
    expect(dockerfile).toMatch(/^COPY node \/usr\/local\/bin\/node$/m);
    expect(dockerfile.split(/^FROM /m).at(-1)).toMatch(/^USER node$/m);
  });

  it('copies the dependencies in a layer below the sources, so a source edit reuses it', () => {
    expect(dockerfile.indexOf('COPY deps/ /app/')).toBeGreaterThan(0);
    expect(dockerfile.indexOf('COPY app/ /app/')).toBeGreaterThan(dockerfile.indexOf('COPY deps/ /app/'));
  });
});

describe('Grafana provisioning', () => {
  const datasourceFiles = readdirSync(fromRoot('infra/grafana/provisioning/datasources'));
  const provisionedUids = new Set(
    datasourceFiles.flatMap((file) => {
      const { datasources } = loadYaml(`infra/grafana/provisioning/datasources/${file}`) as {
        datasources: { uid?: string }[];
      };
      return datasources.map((datasource) => datasource.uid ?? '(no uid)');
    }),
  );
  const dashboardFiles = readdirSync(fromRoot('infra/grafana/dashboards')).filter((f) => f.endsWith('.json'));

  it('provisions datasources with fixed uids, Prometheus as `prometheus`', () => {
    expect(provisionedUids).toContain('prometheus');
    expect(provisionedUids).not.toContain('(no uid)');
  });

  it('links exemplars to traces: Prometheus stores them, the trace_id label leads to the provisioned Zipkin', () => {
    expect([compose.services.prometheus?.command ?? []].flat()).toContain(
      '--enable-feature=exemplar-storage',
    );
    type Datasource = {
      uid: string;
      type: string;
      url: string;
      jsonData?: { exemplarTraceIdDestinations?: { name: string; datasourceUid: string }[] };
    };
    const datasources = datasourceFiles.flatMap(
      (file) =>
        (loadYaml(`infra/grafana/provisioning/datasources/${file}`) as { datasources: Datasource[] })
          .datasources,
    );
    const destinations = datasources.find((d) => d.uid === 'prometheus')?.jsonData
      ?.exemplarTraceIdDestinations;
    expect(destinations).toEqual([{ name: TRACE_ID_LABEL, datasourceUid: 'zipkin' }]);
    const zipkin = datasources.find((d) => d.uid === 'zipkin');
    expect(zipkin?.type).toBe('zipkin');
    expect(compose.services.zipkin).toBeDefined();
    expect(zipkin?.url).toBe('http://zipkin:9411');
  });

  it('loads dashboards from the folder compose mounts them into', () => {
    const { providers } = loadYaml('infra/grafana/provisioning/dashboards/dashboards.yml') as {
      providers: { options: { path: string } }[];
    };
    const mounts = (compose.services.grafana?.volumes ?? []).map(String);
    for (const provider of providers) {
      expect(mounts).toContain(`./infra/grafana/dashboards:${provider.options.path}:ro`);
    }
  });

  it.each(dashboardFiles)('%s is a dashboard that uses only provisioned datasource uids', (file) => {
    const dashboard = JSON.parse(readFileSync(fromRoot('infra/grafana/dashboards', file), 'utf8')) as {
      uid: string;
      title: string;
      schemaVersion: number;
      panels: { id: number; gridPos: object }[];
    };
    expect(dashboard.uid).toMatch(/^[\w-]{1,40}$/);
    expect(dashboard.title).not.toBe('');
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
    const ids = dashboard.panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);

    const references: Json[] = [];
    const collect = (node: Json) => {
      if (Array.isArray(node)) node.forEach(collect);
      else if (node !== null && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key === 'datasource') references.push(value);
          else collect(value);
        }
      }
    };
    collect(dashboard as unknown as Json);
    expect(references.length).toBeGreaterThan(0);
    // By uid only: a datasource name or a `${DS_...}` import variable breaks on another Grafana.
    // `-- Grafana --` is Grafana's built-in datasource (annotations), present everywhere.
    const unknown = references.filter((reference) => {
      const uid =
        typeof reference === 'object' && reference !== null && !Array.isArray(reference) && reference.uid;
      return typeof uid !== 'string' || !(provisionedUids.has(uid) || uid === '-- Grafana --');
    });
    expect(unknown).toEqual([]);
  });
});

describe('Prometheus configuration', () => {
  type PrometheusConfig = { scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[] };
  const targetsByJob = (file: string) =>
    Object.fromEntries(
      (loadYaml(file) as PrometheusConfig).scrape_configs.map((job) => [
        job.job_name,
        job.static_configs.flatMap((config) => config.targets),
      ]),
    );
  // The console is a page for people and has no /metrics; the six system processes are scraped.
  const appPorts = appServices
    .filter(ownsDatabase)
    .map(([name, service]) => [name, environmentOf(service).PORT] as const);

  it('scrapes every app service by its compose name and PORT (prometheus.yml)', () => {
    expect(targetsByJob('infra/prometheus/prometheus.yml')).toEqual(
      Object.fromEntries(appPorts.map(([name, port]) => [name, [`${name}:${port}`]])),
    );
  });

  it('scrapes the same jobs on 127.0.0.1 for the demo without Docker (prometheus.local.yml)', () => {
    expect(targetsByJob('infra/prometheus/prometheus.local.yml')).toEqual(
      Object.fromEntries(appPorts.map(([name, port]) => [name, [`127.0.0.1:${port}`]])),
    );
  });

  it('mounts prometheus.yml and every rule file it loads into the compose prometheus', () => {
    const { rule_files: ruleFiles = [] } = loadYaml('infra/prometheus/prometheus.yml') as {
      rule_files?: string[];
    };
    const mounts = (compose.services.prometheus?.volumes ?? []).map(String);
    for (const file of ['prometheus.yml', ...ruleFiles]) {
      expect(mounts).toContain(`./infra/prometheus/${file}:/etc/prometheus/${file}:ro`);
    }
  });

  const promtool = findOnPath('promtool');
  const skipNote = promtool
    ? ''
    : ' [skipped: promtool is not installed; `apt-get install -y prometheus` provides it]';
  it.skipIf(!promtool).each(['prometheus.local.yml', 'prometheus.yml'])(
    `promtool check config accepts %s${skipNote}`,
    (file) => {
      const run = spawnSync(promtool ?? 'promtool', ['check', 'config', fromRoot('infra/prometheus', file)], {
        encoding: 'utf8',
      });
      expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    },
  );
});

function findOnPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, command);
    if (dir && existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}
