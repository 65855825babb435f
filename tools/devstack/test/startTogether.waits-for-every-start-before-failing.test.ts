// A stack whose orders process failed to start used to leave inventory and billing running: the
// clean-up ran as soon as the first start failed, while the others were still starting.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { startTogether } from '../src/serviceProcess.ts';

describe('startTogether', () => {
  it('rejects only after the slower starts have finished, so a clean-up sees every process', async () => {
    const started: string[] = [];
    const start = async (name: string) => {
      if (name === 'orders') throw new Error('orders exited during startup');
      await sleep(50);
      started.push(name);
    };
    await expect(startTogether(['orders', 'inventory', 'billing'], start)).rejects.toThrow(
      'orders exited during startup',
    );
    expect(started.sort()).toEqual(['billing', 'inventory']);
  });

  it('resolves when every start succeeds', async () => {
    const started: string[] = [];
    await startTogether(['a', 'b'], async (name) => {
      started.push(name);
    });
    expect(started).toEqual(['a', 'b']);
  });
});
