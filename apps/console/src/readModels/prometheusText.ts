/** One sample of the Prometheus text format: `name{label="value",...} 42`. */
export type Sample = { name: string; labels: Record<string, string>; value: number };

const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const labelPair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/**
 * The samples of the metric families asked for, from a /metrics response. Enough for the counters
 * and gauges the console shows; not a general parser (no timestamps, no exemplars).
 */
export function parseSamples(text: string, names: ReadonlySet<string>): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = sampleLine.exec(line);
    if (!match || !names.has(match[1] ?? '')) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(labelPair)) {
      if (key !== undefined)
        labels[key] = (value ?? '').replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: match[1] ?? '', labels, value: Number(match[3]) });
  }
  return samples;
}
