import { spawn } from 'node:child_process';
import { closeSync, fstatSync, openSync, readdirSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Whether a process with this pid exists and is not a zombie. `kill(pid, 0)` alone is not enough:
 * a child we SIGKILLed stays a zombie until Node reaps it, and signal 0 still "succeeds" for it.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to someone else; still alive.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  const stat = readProcFile(pid, 'stat');
  if (stat === undefined) return true; // no /proc (macOS): trust kill(0)
  // Format: "pid (comm) S ..."; comm may contain spaces or parentheses, so split at the last ')'.
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  if (state !== 'Z' && state !== 'X') return true;
  // A multi-threaded process (the JVM) shows its main thread as a zombie while the other threads
  // are still being torn down, and until they are, its sockets stay bound. Only a zombie without
  // live threads is really gone.
  return liveThreadCount(pid) > 1;
}

function liveThreadCount(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/task`).length;
  } catch {
    return 0;
  }
}

/** The command line of a process, or undefined where /proc is unavailable or the process is gone. */
function processCommandLine(pid: number): string | undefined {
  return readProcFile(pid, 'cmdline')?.replaceAll('\0', ' ');
}

/**
 * The pid a detached server's pid file names, while that process lives and its command line is the
 * server's (`isOurs`): after a reboot the pid in a stale file may belong to anything. Without /proc
 * (macOS) a live pid is taken as ours.
 */
export function pidFromFile(file: string, isOurs: (commandLine: string) => boolean): number | undefined {
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isProcessAlive(pid)) return undefined;
  const commandLine = processCommandLine(pid);
  return commandLine === undefined || isOurs(commandLine) ? pid : undefined;
}

/** Polls until the process is gone; true if it went away within the timeout. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isProcessAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(50);
  }
  return true;
}

/**
 * Ends a process: SIGTERM, then SIGKILL after `graceMs` (at once when it is 0). Resolves once the
 * pid is really gone; throws, naming `what`, if it outlives the SIGKILL by 10 s.
 */
export async function terminate(pid: number, what: string, graceMs: number): Promise<void> {
  if (graceMs > 0) {
    signal(pid, 'SIGTERM');
    if (await waitForExit(pid, graceMs)) return;
  }
  signal(pid, 'SIGKILL');
  if (!(await waitForExit(pid, 10_000))) {
    throw new Error(`${what} (pid ${pid}) is still alive 10 s after SIGKILL; check \`ps -p ${pid}\`.`);
  }
}

/** Sends a signal, ignoring "no such process" (it already exited, which is what we wanted). */
export function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

function readProcFile(pid: number, name: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${name}`, 'utf8');
  } catch {
    return undefined;
  }
}

/** How a JVM ended: a signal (a kill), an exit code, and whether it ran out of memory. */
export type JvmExit = { code: number | null; signal: NodeJS.Signals | null; outOfMemory: boolean };

type JvmStart = { cwd: string; logFile: string; pidFile: string; env?: NodeJS.ProcessEnv };

/**
 * Spawns `java` detached, in its own process group (it outlives the Node process that started it,
 * and Ctrl-C in a terminal does not reach it), appending its output to `logFile` after a line that
 * says when `what` started, and writes its pid file. Resolves with how it exited, whether the log of
 * this run names an OutOfMemoryError included.
 */
export function spawnJvm(
  what: string,
  args: string[],
  { cwd, logFile, pidFile, env }: JvmStart,
): Promise<JvmExit> {
  const log = openSync(logFile, 'a');
  const logStart = fstatSync(log).size; // this run's lines start here
  let pid: number | undefined;
  let exited: Promise<JvmExit>;
  try {
    writeSync(log, `\n===== devstack: starting ${what} at ${new Date().toISOString()} =====\n`);
    const child = spawn('java', args, {
      cwd,
      detached: true,
      stdio: ['ignore', log, log],
      ...(env ? { env } : {}),
    });
    child.unref();
    pid = child.pid;
    exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        resolve({ code, signal, outOfMemory: /OutOfMemoryError/.test(logSince(logFile, logStart)) });
      });
    });
  } finally {
    closeSync(log); // the child has its own copy of the descriptor
  }
  if (pid === undefined) throw new Error(`Could not spawn java for ${what}; is java on PATH?`);
  writeFileSync(pidFile, `${pid}\n`);
  return exited;
}

/** The end (64 KiB at most) of what a log got since `offset`. */
function logSince(file: string, offset: number): string {
  try {
    const text = readFileSync(file).subarray(offset);
    return text.subarray(Math.max(0, text.length - 65_536)).toString('utf8');
  } catch {
    return '';
  }
}
