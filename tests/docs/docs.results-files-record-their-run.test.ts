import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RUN_RECORD_FIELDS, runRecordLine, startRun } from '@outbox/devstack/run-record';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { writeResults } from '../../bench/support/environment.ts';
import {
  firstAdded,
  type LegacyRecord,
  RECORDED_SINCE,
  RUNS_INDEX,
  recordsItsRun,
  resultsFiles,
} from '../../scripts/results-run-records.ts';
import { repoRoot } from './docReferences.ts';

// A figure is checkable only if its file says which code ran, on a clean tree or not, when, on
// what CPU, how loaded the machine was before and after, and with tracing or not. The writers
// record it (tools/devstack/src/runRecord.ts); the files written before they did are described,
// as far as anything says, in bench/results/RUNS.json, which no file committed since may join.

type Index = { recordedSince: string; files: Record<string, LegacyRecord> };
const index = JSON.parse(readFileSync(RUNS_INDEX, 'utf8')) as Index;
const results = join(repoRoot, 'bench', 'results');

const missingFields = (run: Record<string, unknown>) => RUN_RECORD_FIELDS.filter((field) => !(field in run));

describe('every results file records the run that wrote it', () => {
  it('each file carries its record (revision, clean tree, dates, CPU, load before and after, tracing), or is a listed older one', () => {
    const unrecorded = resultsFiles().filter((name) => !recordsItsRun(name) && !(name in index.files));
    expect(unrecorded).toEqual([]);
  });

  it('the list of older files holds only files committed before the writers recorded runs', () => {
    const added = firstAdded();
    expect(index.recordedSince).toBe(RECORDED_SINCE);
    const late = Object.keys(index.files).filter((name) => {
      const when = added.get(name)?.date;
      return (
        !existsSync(join(results, name)) ||
        when === undefined ||
        Date.parse(when) >= Date.parse(RECORDED_SINCE)
      );
    });
    expect(late).toEqual([]);
  });

  it('says for every older file where each field comes from: the file, an inference from git, or nothing', () => {
    const fields = ['revision', 'clean', 'date', 'cpuModel', 'loadBefore', 'loadAfter', 'tracing'] as const;
    for (const [name, record] of Object.entries(index.files)) {
      for (const field of fields) {
        expect(record[field]?.from, `${name} ${field}`).toMatch(/^(the file|inferred: |not recorded\b)/);
      }
      expect(record.date.value, `${name} date`).not.toBeNull();
    }
  });
});

describe('the writers record it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'run-record-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the checked-out revision and whether the tree is clean when the run starts', () => {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: repoRoot,
      encoding: 'utf8',
    }).trim();
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: repoRoot,
      encoding: 'utf8',
    });
    const run = startRun().finish('off');
    expect(run.revision).toBe(head);
    expect(run.clean).toBe(status.trim() === '');
    expect(missingFields(run)).toEqual([]);
    expect(run.loadBefore).toHaveLength(3);
    expect(Date.parse(run.finishedAt)).toBeGreaterThanOrEqual(Date.parse(run.startedAt));
    expect(runRecordLine(run)).toMatch(
      /^Run: revision `\w+` \((clean tree|with uncommitted changes)\), .* tracing off\.$/,
    );
  });

  it('a benchmark writes the record into its json and its md', () => {
    const out = join(dir, 'bench');
    // It also prints the report, as a bench does: kept out of the test's output.
    const print = vi.spyOn(process.stdout, 'write').mockReturnValue(true);
    try {
      writeResults(out, { answer: 42 }, '# a bench\n', 'on');
    } finally {
      print.mockRestore();
    }
    const json = JSON.parse(readFileSync(`${out}.json`, 'utf8')) as {
      run: Record<string, unknown>;
      answer: number;
    };
    expect(missingFields(json.run)).toEqual([]);
    expect(json.run.tracing).toBe('on');
    expect(json.answer).toBe(42);
    expect(readFileSync(`${out}.md`, 'utf8')).toMatch(/\n\nRun: revision .* tracing on\.\n$/);
  });
});
