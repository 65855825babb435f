const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * "30s", "2m", "1.5h", "500ms" → milliseconds; undefined for anything else. A bare number is
 * refused on purpose: "--duration 30" could mean seconds or milliseconds, and guessing wrong
 * makes a run a thousand times too long or too short.
 */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * (UNITS[match[2] as string] as number);
  return ms > 0 ? Math.round(ms) : undefined;
}

/** 1234 → "1.2 s", 90000 → "1m30s": for messages and the progress line. */
export function formatDuration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}
