import { describe, expect, it } from 'vitest';
import type { JvmExit } from './jvmServer.ts';
import { superviseZipkin } from './supervisor.ts';

/**
 * A stand-in for ZipkinServer: each start() either "runs" (until die() is called) or fails. The
 * real JVM is killed and restarted in tools/devstack/test/zipkin.survives-the-demo-span-rate-and-is-restarted.test.ts.
 */
function fakeZipkin(startResults: ('ok' | 'fails')[]) {
  let die: (exit: JvmExit) => void = () => {};
  let exited: Promise<JvmExit> = new Promise((resolve) => {
    die = resolve;
  });
  let starts = 0;
  return {
    url: 'http://127.0.0.1:1',
    logFile: '/tmp/zipkin.log',
    exited: () => exited,
    start: async () => {
      const result = startResults[starts++] ?? 'fails';
      if (result === 'fails') throw new Error('Port 1 on 127.0.0.1 is already in use');
      exited = new Promise((resolve) => {
        die = resolve;
      });
    },
    waitUntilReady: async () => 1234,
    die: (exit: Partial<JvmExit> = {}) => die({ code: null, signal: null, outOfMemory: false, ...exit }),
    get starts() {
      return starts;
    },
  };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('the Zipkin supervisor', () => {
  it('restarts a Zipkin that died, and says why it died and that it is back', async () => {
    const zipkin = fakeZipkin(['ok']);
    const messages: string[] = [];
    const supervisor = superviseZipkin(zipkin, { report: (m) => messages.push(m), pauseMs: 1 });
    zipkin.die({ code: 3, outOfMemory: true });
    await until(() => messages.length === 2);
    expect(messages).toEqual([
      'Zipkin exited (OutOfMemoryError); the traces it held are lost. Restarting it…',
      'Zipkin is back at http://127.0.0.1:1 (1.2 s); new traces are recorded again.',
    ]);
    supervisor.stop();
    await supervisor.done;
  });

  it('retries a restart that fails, then gives up after three quick attempts', async () => {
    const zipkin = fakeZipkin(['fails', 'fails', 'fails']);
    const messages: string[] = [];
    const supervisor = superviseZipkin(zipkin, { report: (m) => messages.push(m), pauseMs: 1 });
    zipkin.die({ signal: 'SIGKILL' });
    await supervisor.done;
    expect(zipkin.starts).toBe(3);
    expect(messages).toEqual([
      'Zipkin exited (killed by SIGKILL); the traces it held are lost. Restarting it…',
      'Zipkin did not restart: Error: Port 1 on 127.0.0.1 is already in use',
      'Zipkin did not restart: Error: Port 1 on 127.0.0.1 is already in use',
      'Zipkin did not restart: Error: Port 1 on 127.0.0.1 is already in use',
      'Zipkin keeps dying; not restarting it again. See /tmp/zipkin.log.',
    ]);
  });

  it('reports nothing once stopped, even if Zipkin then exits', async () => {
    const zipkin = fakeZipkin(['ok']);
    const messages: string[] = [];
    const supervisor = superviseZipkin(zipkin, { report: (m) => messages.push(m), pauseMs: 1 });
    supervisor.stop();
    zipkin.die({ code: 143 });
    await supervisor.done;
    expect(messages).toEqual([]);
    expect(zipkin.starts).toBe(0);
  });
});
