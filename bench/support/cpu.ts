/**
 * Where the CPU went during a measurement: the machine as a whole (/proc/stat) and the processes
 * we know (relays, broker, every `postgres` process, this process). Linux only; elsewhere the
 * figures are NaN. On a 2-core host shared by all of them this is what explains the numbers.
 */
import { readdirSync, readFileSync } from 'node:fs';

export const TICKS_PER_SECOND = 100; // USER_HZ on every Linux we run on

/** CPU time (user + system) a process has used so far, in ticks of 1/100 s; NaN when it is gone. */
export function procTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the whole line, i.e. 11 and 12 after the command.
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return Number.NaN;
  }
}

/** Per name, `read` of each of its pids: a reading taken before a window and again after it. */
export const readingsOf = (pids: Record<string, number[]>, read: (pid: number) => number) =>
  Object.fromEntries(Object.entries(pids).map(([name, list]) => [name, list.map(read)]));

/**
 * Per name, what its pids' readings grew by between two readings. A process that ended meanwhile
 * (a PostgreSQL backend) reads NaN and counts for nothing.
 */
export function grownBy(before: Record<string, number[]>, after: Record<string, number[]>) {
  return Object.fromEntries(
    Object.entries(after).map(([name, ends]) => [
      name,
      ends.reduce((sum, end, i) => {
        const start = before[name]?.[i] ?? Number.NaN;
        return Number.isFinite(end) && Number.isFinite(start) ? sum + end - start : sum;
      }, 0),
    ]),
  );
}

/**
 * Nanoseconds a process's main thread has spent runnable but waiting for a core so far
 * (/proc/<pid>/schedstat, its second field); NaN when it is gone or the kernel does not keep it.
 * On a saturated host this is the latency a process adds without using any CPU.
 */
export function runQueueWaitNs(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]);
  } catch {
    return Number.NaN;
  }
}

function postgresPids(): number[] {
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return pids;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

function machineTicks(): { busy: number; total: number } {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const values = line.trim().split(/\s+/).slice(1).map(Number);
    const total = values.reduce((a, b) => a + b, 0);
    const idle = (values[3] ?? 0) + (values[4] ?? 0); // idle + iowait
    return { busy: total - idle, total };
  } catch {
    return { busy: Number.NaN, total: Number.NaN };
  }
}

export type CpuSnapshot = {
  at: number;
  machine: { busy: number; total: number };
  groups: Record<string, number>;
  postgres: Map<number, number>;
  self: NodeJS.CpuUsage;
};

export type CpuReport = {
  /** Busy share of all cores over the window, 0..1. */
  machineBusy: number;
  /** CPU seconds per group over the window (relays, broker, postgres, bench = this process). */
  seconds: Record<string, number>;
};

/** `groups`: name → pids whose CPU to add up (e.g. { relays: [...], broker: [pid] }). */
export function cpuSnapshot(groups: Record<string, number[]>): CpuSnapshot {
  const postgres = new Map<number, number>();
  for (const pid of postgresPids()) postgres.set(pid, procTicks(pid));
  const sums: Record<string, number> = {};
  for (const [name, pids] of Object.entries(groups))
    sums[name] = pids.reduce((sum, pid) => sum + procTicks(pid), 0);
  return { at: Date.now(), machine: machineTicks(), groups: sums, postgres, self: process.cpuUsage() };
}

export function cpuSince(before: CpuSnapshot, groups: Record<string, number[]>): CpuReport {
  const after = cpuSnapshot(groups);
  const seconds: Record<string, number> = {};
  for (const name of Object.keys(groups))
    seconds[name] = round2(((after.groups[name] ?? 0) - (before.groups[name] ?? 0)) / TICKS_PER_SECOND);
  // Postgres backends come and go: count a new process from zero, a vanished one not at all.
  let pgTicks = 0;
  for (const [pid, ticks] of after.postgres) pgTicks += ticks - (before.postgres.get(pid) ?? 0);
  seconds.postgres = round2(pgTicks / TICKS_PER_SECOND);
  const self = process.cpuUsage(before.self);
  seconds.bench = round2((self.user + self.system) / 1e6);
  const machine = after.machine.busy - before.machine.busy;
  const total = after.machine.total - before.machine.total;
  return { machineBusy: round2(total > 0 ? machine / total : Number.NaN), seconds };
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** Resident memory of a process in MiB (VmRSS), NaN when it is gone. */
export function rssMiB(pid: number): number {
  try {
    const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
    return match ? Math.round(Number(match[1]) / 1024) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}
