import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kafkaClientsTable } from '../../scripts/figures/kafkaClients.ts';
import { renderFigure } from '../../scripts/render-figures.ts';
import { repoRoot } from './docReferences.ts';

// The Kafka clients' table picks its bench run by the date the run records (a label such as
// "quiet" sorts anywhere), and shows a failover scenario only when both clients ran it.

const run = (label: string, date: string, relayPerSecond: number) => ({
  date,
  label,
  revision: 'abc1234',
  loadavgBefore: [1.5, 1, 1],
  loadavgAfter: [2.5, 1, 1],
  parameters: { rounds: 3 },
  metrics: [
    {
      key: 'relayEventsPerSec',
      label: 'relay backlog drain, events/s',
      byClient: { kafkajs: { median: 4000 }, platformatic: { median: relayPerSecond } },
      ratio: { median: relayPerSecond / 4000 },
    },
  ],
});

describe('the kafka-clients figure table', () => {
  const root = mkdtempSync(join(tmpdir(), 'kafka-clients-figures-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const results = join(root, 'bench', 'results');
  mkdirSync(join(results, 'kafka-clients'), { recursive: true });
  mkdirSync(join(results, 'chaos'));
  mkdirSync(join(root, 'docs'));
  const doc = join(root, 'docs', 'dependencies.md');
  const render = () => renderFigure('kafka-clients', doc, root, { 'kafka-clients': kafkaClientsTable(root) });

  it('says which results file is missing before any run', () => {
    expect(String(render())).toMatch(
      /has no results file: bench\/results\/kafka-clients\/kafka-clients\.<label>\.json/,
    );
  });

  it('renders the run with the newest date, whatever its label', () => {
    writeFileSync(
      join(results, 'kafka-clients', 'kafka-clients.zz-older.json'),
      JSON.stringify(run('zz-older', '2026-11-20T10:00:00Z', 2000)),
    );
    writeFileSync(
      join(results, 'kafka-clients', 'kafka-clients.quiet.json'),
      JSON.stringify(run('quiet', '2026-11-26T10:00:00Z', 6000)),
    );
    const table = String(render());
    expect(table).toMatch(/\| relay backlog drain, events\/s +\| 4,000 +\| 6,000 +\| 1\.50× +\|/);
    expect(table).toContain('(label `quiet`)');
    expect(table).not.toContain('`cluster-leader-kill`:');
  });

  it('adds a failover scenario once both clients ran it with every process switched', () => {
    const chaos = (client: string) => `chaos.cluster-leader-kill.${client}-everything.json`;
    // Earlier runs' files stand in for the new ones: the table reads both shapes of chaos results.
    copyFileSync(
      join(repoRoot, 'bench/results/chaos/chaos.cluster-leader-kill.kafkajs-relays.json'),
      join(results, 'chaos', chaos('kafkajs')),
    );
    expect(String(render())).not.toContain('`cluster-leader-kill`:');
    copyFileSync(
      join(repoRoot, 'bench/results/chaos/chaos.cluster-leader-kill.platformatic-relays.json'),
      join(results, 'chaos', chaos('platformatic')),
    );
    const table = String(render());
    expect(table).toMatch(
      /`cluster-leader-kill`: longest stretch without an event published +\| 11\.9 s +\| 7\.5 s +\| 0\.63× +\|/,
    );
    expect(table).toMatch(
      /`cluster-leader-kill`: events lost \/ invented \/ applied twice +\| 0 \/ 0 \/ 0 +\| 0 \/ 0 \/ 0/,
    );
  });
});
