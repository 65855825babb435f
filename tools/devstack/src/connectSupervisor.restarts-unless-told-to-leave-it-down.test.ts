import { describe, expect, it } from 'vitest';
import type { JvmExit } from './jvmServer.ts';
import { superviseConnect } from './supervisor.ts';

/**
 * A stand-in for ConnectWorker: each start() either "runs" (until die() is called) or fails. The
 * real worker is killed and restarted from the console in
 * apps/console/test/console.connect-killed-and-started-from-the-controls.test.ts.
 */
function fakeWorker(startResults: ('ok' | 'fails')[]) {
  let die: (exit: JvmExit) => void = () => {};
  let exited: Promise<JvmExit> = new Promise((resolve) => {
    die = resolve;
  });
  let starts = 0;
  return {
    url: 'http://127.0.0.1:1',
    logFile: '/tmp/connect.log',
    exited: () => exited,
    start: async () => {
      const result = startResults[starts++] ?? 'fails';
      if (result === 'fails') throw new Error('Port 1 on 127.0.0.1 is already in use');
      exited = new Promise((resolve) => {
        die = resolve;
      });
    },
    waitUntilReady: async () => 4321,
    die: (exit: Partial<JvmExit> = {}) => die({ code: null, signal: null, outOfMemory: false, ...exit }),
    get starts() {
      return starts;
    },
  };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('the Kafka Connect supervisor', () => {
  it('restarts a worker that died on its own, and says how it died and that it is back', async () => {
    const worker = fakeWorker(['ok']);
    const messages: string[] = [];
    const supervisor = superviseConnect(worker, { report: (m) => messages.push(m), pauseMs: 1 });
    worker.die({ signal: 'SIGKILL' });
    await until(() => messages.length === 2);
    expect(messages).toEqual([
      'Kafka Connect exited (killed by SIGKILL); its connectors publish nothing until it is back. Restarting it…',
      'Kafka Connect is back at http://127.0.0.1:1 (4.3 s); its connectors resume from their slots.',
    ]);
    // And watches the new JVM too.
    worker.die({ outOfMemory: true, code: 3 });
    await until(() => messages.length === 4);
    expect(messages[2]).toContain('(OutOfMemoryError)');
    supervisor.stop();
  });

  it('leaves a worker down that the console stopped, until the console starts it', async () => {
    const worker = fakeWorker(['ok', 'ok']);
    const messages: string[] = [];
    const supervisor = superviseConnect(worker, { report: (m) => messages.push(m), pauseMs: 1 });
    supervisor.pause();
    worker.die({ signal: 'SIGKILL' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(worker.starts).toBe(0);
    expect(messages).toEqual([]);
    await worker.start(); // the console's start button
    supervisor.resume();
    worker.die({ code: 1 });
    await until(() => messages.length === 2);
    expect(messages[0]).toContain('(exit code 1)');
    expect(worker.starts).toBe(2);
    supervisor.stop();
  });

  it('gives up after three quick failed restarts, and says where to look', async () => {
    const worker = fakeWorker(['fails', 'fails', 'fails']);
    const messages: string[] = [];
    superviseConnect(worker, { report: (m) => messages.push(m), pauseMs: 1 });
    worker.die({ code: 137 });
    await until(() => messages.at(-1)?.includes('keeps dying') === true);
    expect(worker.starts).toBe(3);
    expect(messages.at(-1)).toBe('Kafka Connect keeps dying; not restarting it again. See /tmp/connect.log.');
  });
});
