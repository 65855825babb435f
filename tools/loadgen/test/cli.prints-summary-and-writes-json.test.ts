// The CLI as a user runs it: a real process against the whole system, output not a terminal.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@outbox/devstack/ports';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { type Stack, startStack } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadResult, Outcome } from '../src/index.ts';

useLeakGuard();

const cli = join(import.meta.dirname, '..', 'src', 'cli.ts');
type Run = { code: number | null; stdout: string; stderr: string };

function runCli(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let stack: Stack;
const dir = mkdtempSync(join(tmpdir(), 'loadgen-cli-'));
beforeAll(async () => {
  stack = await startStack('loadgencli', sharedKafkaBrokers());
});
afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('npm run load', () => {
  it('sends the orders, prints progress and the summary, and writes a JSON report that matches the database', async () => {
    const json = join(dir, 'report.json');
    const markdown = join(dir, 'report.md');
    const { services, databases } = stack;
    const run = await runCli([
      ...['--url', services.orders.url, '--rate', '20', '--count', '24', '--seed', '12'],
      ...['--mix', 'valid=70,outOfStock=10,declined=10,invalid=10'],
      ...['--orders-db', databases.orders.url, '--inventory-db', databases.inventory.url],
      ...['--billing-db', databases.billing.url, '--wait', '40s'],
      ...[
        '--metrics',
        `orders=${services.orders.url},inventory=${services.inventory.url},billing=${services.billing.url}`,
      ],
      ...['--json', json, '--markdown', markdown],
    ]);
    expect(run.stderr).toMatch(/^progress: +100% +sent 24 +accepted \d+ +shed \d+ +rejected \d+ /m);
    expect(run.stderr).not.toContain('\r'); // no redrawn bar when the output is not a terminal
    expect(run.code, run.stderr).toBe(0);
    for (const title of [
      'Orders sent: 24',
      'Final states of the accepted orders',
      'End-to-end latency',
      'per service outbox',
      'duplicates skipped',
    ]) {
      expect(run.stdout).toContain(title);
    }

    const report = JSON.parse(readFileSync(json, 'utf8')) as { result: LoadResult; outcome: Outcome };
    expect(report.result.orders).toHaveLength(24);
    const [orders] = await queryOnce<{ n: number }>(
      databases.orders.url,
      'select count(*)::int as n from orders',
    );
    expect(report.result.accepted).toBe(orders?.n);
    const finalStates = Object.values(report.outcome.finalStates).reduce((sum, n) => sum + n, 0);
    expect(finalStates).toBe(report.result.accepted);
    expect(report.outcome.pending).toEqual([]);
    expect(report.outcome.events.publishedByType.ORDER_CREATED).toBe(report.result.accepted);
    expect(run.stdout).toContain(`CONFIRMED`);
    expect(readFileSync(markdown, 'utf8')).toMatch(/^\| state +\|/m);
  });

  it('a bad flag exits 2 and names the flag and the form it expects', async () => {
    const badRate = await runCli(['--rate', 'fast']);
    expect(badRate.code).toBe(2);
    expect(badRate.stderr).toContain('--rate expects a number above 0');

    const unknown = await runCli(['--rat', '5']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown flag --rat');

    const badDuration = await runCli(['--duration', '30']);
    expect(badDuration.code).toBe(2);
    expect(badDuration.stderr).toContain('--duration expects a duration such as 30s');

    const badMix = await runCli(['--mix', 'valid=80,broken=5']);
    expect(badMix.code).toBe(2);
    expect(badMix.stderr).toContain('unknown order kind "broken"');
  });

  it('exits 1 and says how to start the demo when the orders API is not reachable', async () => {
    const run = await runCli(['--url', `http://127.0.0.1:${await freePort()}`, '--count', '1']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('not reachable');
    expect(run.stderr).toContain('./dev demo');
  });
});
