import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

/** Runs a command to its end: resolves with its output, rejects with it (and its exit code) when it fails. */
export const run = promisify(execFile);

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

/**
 * Polls `check` every `intervalMs` until it returns a value (not undefined) and resolves with it;
 * throws, naming what it waited for, once `timeoutMs` passed. An error `check` throws ends the wait.
 */
export async function eventually<T>(
  description: string | (() => string),
  check: () => Promise<T | undefined>,
  timeoutMs = 30_000,
  intervalMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      const what = typeof description === 'string' ? description : description();
      throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    }
    await sleep(intervalMs);
  }
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
