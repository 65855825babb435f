// node scripts/results-run-records.ts
//
// The run records of the results files written before every writer recorded one
// (tools/devstack/src/runRecord.ts): for each field, the value the file itself gives, or one
// inferred from git (and said to be), or null. Written to bench/results/RUNS.json, which only lists
// files committed before RECORDED_SINCE; a results file committed after it must carry its own
// record, and tests/docs checks both.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { RUN_RECORD_FIELDS } from '@outbox/devstack/run-record';
import { benchOf, resultsKey } from '../bench/support/results.ts';

/** From this moment on, every results file records its run itself (the writers do it since then). */
export const RECORDED_SINCE = '2026-11-29T05:00:00Z';

const root = resolve(import.meta.dirname, '..');
const results = join(root, 'bench', 'results');
export const RUNS_INDEX = join(results, 'RUNS.json');

export type Field<T> = { value: T | null; from: string };
export type LegacyRecord = {
  revision: Field<string>;
  clean: Field<boolean>;
  date: Field<string>;
  cpuModel: Field<string>;
  loadBefore: Field<number[]>;
  loadAfter: Field<number[]>;
  tracing: Field<string>;
};

const HASH = /\b[0-9a-f]{7,12}\b/;
const NOT_RECORDED = { value: null, from: 'not recorded' } as const;
const fromFile = <T>(value: T | null | undefined): Field<T> | undefined =>
  value === undefined || value === null ? undefined : { value, from: 'the file' };

/** Every value under `key` anywhere in a parsed json, depth first. */
function valuesOf(json: unknown, key: string): unknown[] {
  if (Array.isArray(json)) return json.flatMap((item) => valuesOf(item, key));
  if (json && typeof json === 'object')
    return Object.entries(json).flatMap(([name, value]) => [
      ...(name === key ? [value] : []),
      ...valuesOf(value, key),
    ]);
  return [];
}

const strings = (values: unknown[]) => values.filter((value): value is string => typeof value === 'string');
/** A load average as an array of numbers, or written as "35.14, 47.42, 39.35 (15:35:09 UTC)". */
const loads = (value: unknown): number[] | undefined => {
  if (Array.isArray(value) && value.every((item) => typeof item === 'number')) return value as number[];
  const written = typeof value === 'string' ? /^\s*([\d.]+), ([\d.]+), ([\d.]+)/.exec(value) : null;
  return written ? written.slice(1).map(Number) : undefined;
};

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: 'pipe' }).trim();
}

function inHistory(hash: string): boolean {
  try {
    git('cat-file', '-e', `${hash}^{commit}`);
    return true;
  } catch {
    return false;
  }
}

/**
 * The commit that first added each file under bench/results, with its parent and date, by its path
 * in its bench's folder (`system/system.json`): a file added before the folders were, and moved into
 * its folder since, counts as added when it was first added.
 */
export function firstAdded(): Map<string, { commit: string; parent: string; date: string }> {
  const found = new Map<string, { commit: string; parent: string; date: string }>();
  let current = { commit: '', parent: '', date: '' };
  const log = git(
    'log',
    '--no-renames',
    '--diff-filter=A',
    '--format=@%h %p %cI',
    '--name-only',
    '--',
    'bench/results',
  );
  for (const line of log.split('\n')) {
    if (line.startsWith('@')) {
      const [commit = '', parent = '', date = ''] = line.slice(1).split(' ');
      current = { commit, parent: parent.slice(0, commit.length), date };
    } else if (line.trim()) found.set(resultsKey(line.trim()), current); // oldest last
  }
  return found;
}

function revisionOf(json: unknown, md: string): Field<string> | undefined {
  const written = [
    ...strings(valuesOf(json, 'revision')),
    ...(md.match(/revision `?[0-9a-f]{7,12}\b[^`\s]*`?/g) ?? []),
  ];
  const hashes = [
    ...new Set(written.map((text) => HASH.exec(text)?.[0]).filter((hash) => hash !== undefined)),
  ];
  if (hashes.length === 0) return undefined;
  const missing = hashes.filter((hash) => !inHistory(hash));
  return {
    value: hashes.join(', '),
    from:
      missing.length > 0 ? `the file; not in this repository's history: ${missing.join(', ')}` : 'the file',
  };
}

function loadOf(json: unknown, md: string, when: 'before' | 'after'): Field<number[]> | undefined {
  const nested = valuesOf(json, 'loadavg').map((value) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)[when]
      : undefined,
  );
  const flat = [
    ...valuesOf(json, when === 'before' ? 'loadavgBefore' : 'loadavgAfter'),
    ...valuesOf(json, when === 'before' ? 'loadAverageAtStart' : 'loadAverageAtEnd'),
  ];
  const steps = valuesOf(json, 'loadavg')
    .map(loads)
    .filter((value) => value !== undefined);
  const found = [...nested, ...flat].map(loads).find((value) => value !== undefined);
  if (found) return fromFile(found);
  if (steps.length > 0) {
    const step = when === 'before' ? steps[0] : steps.at(-1);
    return step
      ? { value: step, from: `the file: its ${when === 'before' ? 'first' : 'last'} step's load` }
      : undefined;
  }
  const prose = /load average ([\d.]+) before, ([\d.]+) after/.exec(md);
  return prose ? fromFile([Number(prose[when === 'before' ? 1 : 2])]) : undefined;
}

/** Benches whose history never gave a process tracing settings: their runs had tracing off. */
const UNTRACED = [
  'cdc-latency',
  'cdc-side-by-side',
  'consumer-throughput',
  'failover-cost',
  'kafka-clients',
  'kafka-failover',
  'outbox-migrations',
  'publisher-leader-kill',
  'relay-claim-profile',
  'relay-throughput',
  'relay-vs-debezium',
  'retention',
  'write-path',
];

function tracingOf(json: unknown, md: string, name: string): Field<string> | undefined {
  const written = valuesOf(json, 'tracing').find(
    (value) => typeof value === 'boolean' || typeof value === 'string',
  );
  if (written !== undefined)
    return fromFile(typeof written === 'boolean' ? (written ? 'on' : 'off') : written);
  const prose = /\btracing (off|on)\b/i.exec(md);
  if (prose) return fromFile(prose[1]?.toLowerCase());
  const bench = benchOf(name);
  if (bench === 'chaos')
    return { value: 'off', from: 'inferred: the chaos stack starts no process with OTEL_* settings' };
  if (UNTRACED.includes(bench))
    return {
      value: 'off',
      from: 'inferred: the bench that wrote it never set OTEL_* on a process (git log -S OTEL)',
    };
  return undefined;
}

/** What a results file (its json and md twins) says of its run, completed from git where it is silent. */
function legacyRecord(name: string, added: { commit: string; parent: string; date: string } | undefined) {
  const base = name.replace(/\.(json|md)$/, '');
  const read = (ext: string) =>
    existsSync(join(results, base + ext)) ? readFileSync(join(results, base + ext), 'utf8') : '';
  const jsonText = read('.json');
  const json: unknown = jsonText ? JSON.parse(jsonText) : undefined;
  const md = read('.md');
  const revision = revisionOf(json, md);
  const dirty = strings(valuesOf(json, 'revision')).some((text) => text.includes('+changes'));
  // A time of day beats a day alone ("2026-11-26" reads as its midnight).
  const dates = strings([
    ...valuesOf(json, 'date'),
    ...valuesOf(json, 'startedAt'),
    ...valuesOf(json, 'started'),
  ]);
  const date = dates.find((value) => value.includes('T')) ?? dates[0];
  const mdDate = /\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?Z/.exec(md)?.[0];
  const cpu = strings(valuesOf(json, 'cpuModel'))[0] ?? /"cpuModel":"([^"]+)"/.exec(md)?.[1];
  const record: LegacyRecord = {
    revision:
      revision ??
      (added?.parent
        ? {
            value: added.parent,
            from: `inferred: the parent of ${added.commit}, the commit that added the file`,
          }
        : NOT_RECORDED),
    clean: dirty ? { value: false, from: 'the file (+changes)' } : NOT_RECORDED,
    date:
      fromFile(date ?? mdDate) ??
      (added ? { value: added.date, from: `inferred: when ${added.commit} was committed` } : NOT_RECORDED),
    cpuModel: fromFile(cpu) ?? NOT_RECORDED,
    loadBefore: loadOf(json, md, 'before') ?? NOT_RECORDED,
    loadAfter: loadOf(json, md, 'after') ?? NOT_RECORDED,
    tracing: tracingOf(json, md, name) ?? NOT_RECORDED,
  };
  return { ...record, revision: notLaterThanTheRun(record.revision, record.date.value) };
}

/**
 * A revision committed after the run started cannot be the code it ran (a results commit taken for
 * the code, say): said so when the file names it, and dropped when it was only inferred.
 */
function notLaterThanTheRun(revision: Field<string>, runDate: string | null): Field<string> {
  const hash = revision.value;
  if (!hash || !runDate || hash.includes(',') || revision.from.includes('not in this')) return revision;
  const committed = Date.parse(git('show', '-s', '--format=%cI', hash));
  const late = Math.round((committed - Date.parse(runDate)) / 1000);
  if (!Number.isFinite(late) || late <= 0) return revision;
  return revision.from.startsWith('inferred')
    ? {
        value: null,
        from: `not recorded (${hash}, the parent of the commit that added it, came ${late} s after the run started)`,
      }
    : {
        ...revision,
        from: `${revision.from}; committed ${late} s after the run started, so the run cannot have checked it out`,
      };
}

/** Whether a results file holds complete run records of its own (every scenario's, in a chaos array). */
export function recordsItsRun(name: string): boolean {
  const text = readFileSync(join(results, name), 'utf8');
  if (!name.endsWith('.json')) return /^Run: /m.test(text);
  const json: unknown = JSON.parse(text);
  return (Array.isArray(json) ? json : [json]).every((item) => {
    const run = (item as { run?: unknown } | null)?.run;
    return !!run && typeof run === 'object' && RUN_RECORD_FIELDS.every((field) => field in run);
  });
}

/** The results files a record is kept for: each json, and each other file but a json's md twin. */
export function resultsFiles(): string[] {
  const names = readdirSync(results, { recursive: true, encoding: 'utf8' }).filter((name) =>
    name.includes('/'),
  );
  // A readable .md beside its .json is the same run; any other file (a .md alone, a .txt) is one.
  return names.filter((name) => !(name.endsWith('.md') && names.includes(name.replace(/\.md$/, '.json'))));
}

function main(): void {
  const added = firstAdded();
  const files = Object.fromEntries(
    resultsFiles()
      .filter((name) => {
        const when = added.get(name)?.date;
        return when !== undefined && Date.parse(when) < Date.parse(RECORDED_SINCE);
      })
      .filter((name) => !recordsItsRun(name))
      .sort()
      .map((name) => [name, legacyRecord(name, added.get(name))]),
  );
  const index = {
    about:
      'Run records of the results files written before the writers recorded their own (tools/devstack/src/runRecord.ts): ' +
      'each field as the file gives it, or inferred from git and said to be, or null when nothing says. Written by scripts/results-run-records.ts.',
    recordedSince: RECORDED_SINCE,
    files,
  };
  const text = `${JSON.stringify(index, null, 2)}\n`;
  writeFileSync(RUNS_INDEX, text);
  console.log(`${Object.keys(files).length} legacy results files in ${RUNS_INDEX}`);
}

if (import.meta.filename === process.argv[1]) main();
