import { parseDuration } from '@outbox/loadgen';

// The flag checks every bench shares: bench/support/bench.ts's option kinds turn the strings into
// numbers here, so a bad value stops the run before any set-up, naming the flag.

export function positiveInt(name: string, value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1)
    throw new Error(`--${name} must be a positive integer, not ${value}`);
  return parsed;
}

export function positiveInts(name: string, value: string): number[] {
  return value.split(',').map((item) => positiveInt(name, item));
}

export function positiveNumber(name: string, value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0)
    throw new Error(`--${name} must be a positive number, not ${value}`);
  return parsed;
}

export function durationMs(name: string, value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined) throw new Error(`--${name}: not a duration: ${value} (e.g. 60s, 2m)`);
  return ms;
}

/** `--env KEY=VALUE`, repeated: extra environment for the processes a bench starts. */
export function environment(name: string, pairs: string[]): Record<string, string> {
  return Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=');
      if (at < 1) throw new Error(`--${name} ${pair}: expected KEY=VALUE`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}
