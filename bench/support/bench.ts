/**
 * A bench declared once: its name, what it measures, and its flags, each with its default, its check
 * and a line of help. `defineBench` reads the command line against them (strict: an unknown flag or a
 * bad value stops the run before any set-up, naming the flag), prints the usage on `--help`, and gives
 * back the typed values, the bench's log and `write`, which puts the run's record (revision, start and
 * end, CPU model, load before and after, tracing) beside the report in `<out>.json` and `<out>.md`.
 *
 *   const bench = defineBench({ name: 'relay-claim-profile', about: '…', options: { events: int(20000, '…') } });
 *   const { events } = bench.args;
 *   …
 *   bench.write(report, markdown, 'off');
 */
import { parseArgs } from 'node:util';
import { durationMs, environment, positiveInt, positiveInts, positiveNumber } from './args.ts';
import { loadavg, logger, machineInfo, postgresInfo, type RunHeader, writeResults } from './environment.ts';
import { resultsPath } from './results.ts';

type Raw = string | boolean | string[] | undefined;

/**
 * One flag: how node:util reads it, its default as typed on the command line, its check. Declared
 * under its name in code (`warmupEvents`); on the command line it is that name in kebab case
 * (`--warmup-events`) unless `flag` names it otherwise.
 */
export type Option<T> = {
  kind: 'string' | 'boolean' | 'multiple';
  default?: string;
  help: string;
  flag?: string;
  parse(name: string, raw: Raw): T;
};

/** `option` under another flag than its name in code (`batchSize` as `--batch`). */
export const as = <T>(flag: string, option: Option<T>): Option<T> => ({ ...option, flag });

const str = (raw: Raw) => (typeof raw === 'string' ? raw : '');

const asIs = (_name: string, value: string) => value;

/** A string flag, or one whose value `parse` checks and converts. */
export function text(fallback: string, help: string): Option<string>;
export function text<T>(fallback: string, help: string, parse: (name: string, value: string) => T): Option<T>;
export function text(fallback: string, help: string, parse = asIs): Option<unknown> {
  return { kind: 'string', default: fallback, help, parse: (name, raw) => parse(name, str(raw)) };
}

/** A string flag with no default: undefined when not given. */
export function optional(help: string): Option<string | undefined>;
export function optional<T>(help: string, parse: (name: string, value: string) => T): Option<T | undefined>;
export function optional(help: string, parse = asIs): Option<unknown> {
  return {
    kind: 'string',
    help,
    parse: (name, raw) => (raw === undefined ? undefined : parse(name, str(raw))),
  };
}

export const int = (fallback: number, help: string) => text(String(fallback), help, positiveInt);
export const ints = (fallback: string, help: string) => text(fallback, help, positiveInts);
export const number = (fallback: number, help: string) => text(String(fallback), help, positiveNumber);
/** A duration such as `60s` or `2m`, in milliseconds. */
export const duration = (fallback: string, help: string) => text(fallback, help, durationMs);
/** Comma-separated names, checked against `known` when given. */
export const list = <C extends string = string>(fallback: string, help: string, known?: readonly C[]) =>
  text(fallback, help, (name, value) => {
    const items = value.split(',') as C[];
    const unknown = known && items.find((item) => !known.includes(item));
    if (unknown !== undefined) throw new Error(`--${name}: unknown ${unknown}; known: ${known?.join(',')}`);
    return items;
  });

/** One of `choices`. */
export const oneOf = <C extends string>(fallback: C, help: string, choices: readonly C[]) =>
  text(fallback, `${help}: ${choices.join(' or ')}`, (name, value) => {
    if (!choices.includes(value as C)) throw new Error(`--${name}: ${choices.join(' or ')}, not ${value}`);
    return value as C;
  });

/** A switch, off unless given. */
export function flag(help: string): Option<boolean> {
  return { kind: 'boolean', help, parse: (_name, raw) => raw === true };
}

/** A `--skip-…` switch: the value is whether the part runs, so true unless given. */
export function skip(flagName: string, help: string): Option<boolean> {
  return { kind: 'boolean', help, flag: flagName, parse: (_name, raw) => raw !== true };
}

/** A string flag that may be given again and again, or one whose values `parse` checks and converts. */
export function repeated(help: string): Option<string[]>;
export function repeated<T>(help: string, parse: (name: string, values: string[]) => T): Option<T>;
export function repeated(
  help: string,
  parse = (_name: string, values: string[]): unknown => values,
): Option<unknown> {
  return { kind: 'multiple', help, parse: (name, raw) => parse(name, Array.isArray(raw) ? raw : []) };
}

/** `--env KEY=VALUE`, repeated: extra environment for the processes a bench starts. */
export const env = (help: string) => repeated(help, environment);

type Values<O> = { [K in keyof O]: O[K] extends Option<infer T> ? T : never };

/** The values, with `out` a string unless the bench declares its own. */
type Args<O> = Values<O> & ('out' extends keyof O ? unknown : { out: string });

export type Bench<N extends string, O> = {
  name: N;
  args: Args<O>;
  /** The values but `out`: what a report records as its parameters. */
  parameters: Omit<Values<O>, 'out'>;
  /** The flags as given, defaults filled in, before their checks: what a report records of its command line. */
  given: Record<string, string | boolean | string[]>;
  log: (message: string) => void;
  /** How the bench was started (`node bench/<name>.ts <flags>`), for its report to repeat. */
  command: string;
  /** The load averages (1, 5, 15 min) when the bench started and now: on a shared machine, how quiet it was. */
  load(): { before: number[]; after: number[] };
  /** What every results file opens with: the bench, the date, the machine, Node and PostgreSQL's settings. */
  header(postgresUrl: string, settings?: string[]): Promise<{ benchmark: N } & RunHeader>;
  /** Write `<out>.json` and `<out>.md` with the run's record, and print the Markdown. */
  write(report: Record<string, unknown>, markdown: string, tracing: string, out?: string): void;
};

/** The flag every bench has unless it declares its own: where its results go. */
const outOption = (name: string) => text(resultsPath(name), 'prefix of the <out>.json and <out>.md written');

export function defineBench<N extends string, O extends Record<string, Option<unknown>>>(definition: {
  name: N;
  /** One or two sentences: what the bench measures (the first lines of `--help`). */
  about: string;
  options: O;
  /** The name the bench logs under, when it is not its name. */
  logAs?: string;
}): Bench<N, O> {
  const options: Record<string, Option<unknown>> = { ...definition.options };
  options.out ??= outOption(definition.name);
  const flagOf = (key: string) => options[key]?.flag ?? key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  const { values } = parseArgs({
    options: {
      help: { type: 'boolean', short: 'h' },
      ...Object.fromEntries(
        Object.entries(options).map(([key, option]) => [
          flagOf(key),
          option.kind === 'multiple'
            ? { type: 'string' as const, multiple: true, default: [] }
            : { type: option.kind, ...(option.default === undefined ? {} : { default: option.default }) },
        ]),
      ),
    },
  });
  if (values.help) {
    process.stdout.write(usage(definition.name, definition.about, options, flagOf));
    process.exit(0);
  }
  const given = values as Record<string, string | boolean | string[]>;
  const args = Object.fromEntries(
    Object.entries(options).map(([key, option]) => [key, option.parse(flagOf(key), given[flagOf(key)])]),
  ) as Args<O>;
  const { out: _out, ...parameters } = args as Record<string, unknown>;
  const log = logger(definition.logAs ?? definition.name);
  const loadBefore = loadavg();
  return {
    name: definition.name,
    args,
    parameters: parameters as Omit<Values<O>, 'out'>,
    given,
    log,
    command: `node bench/${definition.name}.ts ${process.argv.slice(2).join(' ')}`.trim(),
    load: () => ({ before: loadBefore, after: loadavg() }),
    header: async (postgresUrl, settings) => ({
      benchmark: definition.name,
      date: new Date().toISOString(),
      machine: machineInfo(),
      node: process.version,
      postgres: await postgresInfo(postgresUrl, settings),
    }),
    write(report, markdown, tracing, out = String(args.out)) {
      writeResults(out, report, markdown, tracing);
      log(`wrote ${out}.json and ${out}.md`);
    },
  };
}

function usage(
  name: string,
  about: string,
  options: Record<string, Option<unknown>>,
  flagOf: (key: string) => string,
): string {
  const lines = Object.entries(options).map(([key, option]) => {
    const shown = option.kind === 'boolean' ? '' : option.kind === 'multiple' ? ' VALUE …' : ' VALUE';
    const fallback =
      option.default === undefined || option.default === '' ? '' : ` (default ${option.default})`;
    return `  --${flagOf(key)}${shown}\n      ${option.help}${fallback}`;
  });
  return `node bench/${name}.ts [flags]\n\n${about}\n\nFlags:\n${lines.join('\n')}\n  --help\n      this text\n`;
}
