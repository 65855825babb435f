import { parseArgs } from 'node:util';
import type { MetricsUrls } from './duplicateMetrics.ts';
import { parseDuration } from './duration.ts';
import { checkMix, ORDER_KINDS, type OrderMix } from './orderMix.ts';

/** A flag the user got wrong; the CLI prints the message and exits with 2. */
export class UsageError extends Error {
  readonly code = 'USAGE';
}

export type CliConfig = {
  help: boolean;
  url: string;
  rate?: number;
  burst: boolean;
  concurrency: number;
  count?: number;
  durationMs?: number;
  mix?: OrderMix;
  seed?: number;
  databaseUrls: { orders: string; inventory: string; billing: string };
  /** Undefined with `--metrics none`. */
  metricsUrls?: MetricsUrls;
  waitMs: number;
  jsonFile?: string;
  markdownFile?: string;
};

// The demo's databases and ports (scripts/demo.ts): with no flags, the CLI drives `./dev demo`,
// whose PostgreSQL is DEMO_POSTGRES_URL when that is set, as for the demo itself.
const DEMO_POSTGRES = 'postgresql://postgres@127.0.0.1:5432';
const DEMO_METRICS: MetricsUrls = {
  orders: 'http://127.0.0.1:3001',
  inventory: 'http://127.0.0.1:3003',
  billing: 'http://127.0.0.1:3004',
};
const DEFAULT_RATE = 20;
const DEFAULT_COUNT = 100;

export const USAGE = `Usage: npm run load -- [flags]

Sends a mix of orders to the orders API, then waits for the saga to decide every accepted order
and prints what happened: requests by outcome, final order states, end-to-end latency, events per
outbox, events consumed and duplicates skipped. Defaults drive the local demo (./dev demo).

Pace (default --rate ${DEFAULT_RATE}):
  --rate <n>            orders per second, held steady
  --burst               as fast as --concurrency allows
  --concurrency <n>     requests in flight at most (default 16)
How much (default --count ${DEFAULT_COUNT}; with both, whichever ends first):
  --count <n>           stop after n orders
  --duration <time>     stop after this long: 30s, 2m, 500ms
What:
  --mix <weights>       e.g. valid=80,outOfStock=5,declined=10,invalid=5 (kinds left out are not sent;
                        default valid=85,outOfStock=5,declined=5,invalid=5)
  --seed <n>            repeat the same sequence of orders
Where:
  --url <url>           orders API (default http://127.0.0.1:3001)
  --orders-db <url>     default <DEMO_POSTGRES_URL>/orders (DEMO_POSTGRES_URL: as for ./dev demo,
                        default ${DEMO_POSTGRES})
  --inventory-db <url>  default <DEMO_POSTGRES_URL>/inventory
  --billing-db <url>    default <DEMO_POSTGRES_URL>/billing
  --metrics <list>      base URLs of /metrics, e.g. orders=http://127.0.0.1:3001,inventory=...,billing=...
                        (default the demo's ports 3001, 3003, 3004; "none" to skip duplicates)
Report:
  --wait <time>         how long to wait for every order to be decided (default 60s)
  --json <file>         also write the full report as JSON
  --markdown <file>     also write the summary tables as markdown
  --help

Exit codes: 0 done; 1 the API was unreachable, or orders were still undecided after --wait;
2 a bad flag.`;

/**
 * Parse and check every flag at once, and the one variable the CLI reads (DEMO_POSTGRES_URL, from
 * `env`); a UsageError names the flag or variable and the form it expects.
 */
export function parseCliArgs(args: string[], env: Record<string, string | undefined> = {}): CliConfig {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        help: { type: 'boolean', short: 'h' },
        url: { type: 'string' },
        rate: { type: 'string' },
        burst: { type: 'boolean' },
        concurrency: { type: 'string' },
        count: { type: 'string' },
        duration: { type: 'string' },
        mix: { type: 'string' },
        seed: { type: 'string' },
        'orders-db': { type: 'string' },
        'inventory-db': { type: 'string' },
        'billing-db': { type: 'string' },
        metrics: { type: 'string' },
        wait: { type: 'string' },
        json: { type: 'string' },
        markdown: { type: 'string' },
      },
    }));
  } catch (err) {
    throw new UsageError(parseArgsMessage(err));
  }
  const text = (name: string) => values[name] as string | undefined;
  const parsed = <T>(name: string, parse: (flag: string, value: string) => T): T | undefined => {
    const value = text(name);
    return value === undefined ? undefined : parse(`--${name}`, value);
  };
  const burst = values.burst === true;
  if (burst && text('rate') !== undefined) throw new UsageError('--rate and --burst: give one or the other');
  const count = parsed('count', (flag, v) => integer(flag, v, 1));
  const durationMs = parsed('duration', duration);
  const metrics = text('metrics');
  const demoDatabase = demoDatabaseUrls(env.DEMO_POSTGRES_URL);
  const database = (name: 'orders' | 'inventory' | 'billing') =>
    url(`--${name}-db`, text(`${name}-db`) ?? demoDatabase(name));
  // Undefined fields are left out of the JSON report, as flags that were not given.
  return {
    help: values.help === true,
    url: url('--url', text('url') ?? 'http://127.0.0.1:3001'),
    rate: burst ? undefined : (parsed('rate', positive) ?? DEFAULT_RATE),
    burst,
    concurrency: parsed('concurrency', (flag, v) => integer(flag, v, 1)) ?? 16,
    count: count === undefined && durationMs === undefined ? DEFAULT_COUNT : count,
    durationMs,
    mix: parsed('mix', (_, v) => parseMix(v)),
    seed: parsed('seed', (flag, v) => integer(flag, v, 0)),
    databaseUrls: {
      orders: database('orders'),
      inventory: database('inventory'),
      billing: database('billing'),
    },
    metricsUrls:
      metrics === 'none' ? undefined : metrics === undefined ? DEMO_METRICS : parseMetrics(metrics),
    waitMs: parsed('wait', duration) ?? 60_000,
    jsonFile: text('json'),
    markdownFile: text('markdown'),
  };
}

/** The demo's database `name` on its server: DEMO_POSTGRES_URL's, or the default one. */
function demoDatabaseUrls(server: string | undefined): (name: string) => string {
  const base = server?.trim() || DEMO_POSTGRES;
  if (!URL.canParse(base) || !/^postgres(ql)?:$/.test(new URL(base).protocol)) {
    throw new UsageError(
      'DEMO_POSTGRES_URL is not a postgresql:// URL: it expects the PostgreSQL server of ./dev demo, e.g. postgresql://postgres:secret@127.0.0.1:5432',
    );
  }
  return (name) => {
    const url = new URL(base);
    url.pathname = `/${name}`;
    return url.toString();
  };
}

/** parseArgs' messages are long and generic; keep the flag and what to do. */
function parseArgsMessage(err: unknown): string {
  const { code, message } = err as { code?: string; message: string };
  const flag = /'(-[^']*)'/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown flag ${flag ?? message}`;
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL')
    return `unexpected argument ${flag ?? message}: every value follows its flag`;
  return message;
}

function positive(flag: string, value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0) {
    throw new UsageError(`${flag} expects a number above 0, e.g. ${flag} 50; got "${value}"`);
  }
  return n;
}

function integer(flag: string, value: string, min: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < min) {
    throw new UsageError(`${flag} expects a whole number ≥ ${min}, e.g. ${flag} 100; got "${value}"`);
  }
  return n;
}

function duration(flag: string, value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined)
    throw new UsageError(`${flag} expects a duration such as 30s, 2m or 500ms; got "${value}"`);
  return ms;
}

function url(flag: string, value: string): string {
  if (!URL.canParse(value))
    throw new UsageError(`${flag} expects a URL, e.g. http://127.0.0.1:3001; got "${value}"`);
  return value;
}

/**
 * "a=1,b=2" → [['a', '1'], ['b', '2']], each side trimmed; a UsageError saying what `flag` expects
 * for a pair without `=` or one that does not `fit`.
 */
function pairs(flag: string, value: string, expected: string, fits: (key: string, value: string) => boolean) {
  return value.split(',').map((pair) => {
    const at = pair.indexOf('=');
    const [key, text] = [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
    if (at < 0 || !fits(key, text)) throw new UsageError(`${flag} expects ${expected}; got "${pair}"`);
    return [key, text] as const;
  });
}

/** "valid=80,outOfStock=5" → { valid: 80, outOfStock: 5 }. */
function parseMix(value: string): OrderMix {
  const expected = `kind=weight pairs such as valid=80,outOfStock=5,declined=10,invalid=5 (kinds: ${ORDER_KINDS.join(', ')})`;
  const weighted = (kind: string, weight: string) =>
    kind !== '' && weight !== '' && Number.isFinite(Number(weight));
  const mix = pairs('--mix', value, expected, weighted).map(([kind, weight]) => [kind, Number(weight)]);
  try {
    return checkMix(Object.fromEntries(mix));
  } catch (err) {
    throw new UsageError(`--mix: ${(err as Error).message}`);
  }
}

/** "orders=http://…,inventory=http://…" → { orders, inventory }. */
function parseMetrics(value: string): MetricsUrls {
  const services = ['orders', 'inventory', 'billing'];
  const expected = `service=url pairs (services: ${services.join(', ')}), or "none"`;
  const urls = pairs('--metrics', value, expected, (service) => services.includes(service));
  return Object.fromEntries(urls.map(([service, text]) => [service, url('--metrics', text)]));
}
