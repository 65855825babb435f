import { markdownTableOf } from '@outbox/devstack/table';
import { resultsFile } from '../../bench/support/results.ts';
import type { SpanWeight } from '../../bench/zipkin-span-weight.ts';
import { day, load, num } from './format.ts';
import type { FigureTable } from './types.ts';

const OURS = resultsFile('zipkin-span-weight.json');
const SDK_DEFAULT = resultsFile('zipkin-span-weight.sdk-default-resource.json');
const mib = (bytes: number) => `${num(bytes / 2 ** 20, 1)} MiB`;

/** Zipkin's heap after a full GC as spans are stored: ours, and the same spans with the SDK's default resource. */
export const zipkinSpanWeight: FigureTable = {
  sources: [OURS, SDK_DEFAULT],
  render({ read, link }) {
    const [ours, sdk] = [read<SpanWeight>(OURS), read<SpanWeight>(SDK_DEFAULT)];
    return [
      markdownTableOf(
        ours.rows.map((row, index) => ({ row, other: sdk.rows[index] })),
        {
          'spans stored': ({ row }) => num(row.spans),
          'heap after a full GC, our spans': ({ row }) => mib(row.heapBytes),
          'heap per span, ours': ({ row }) => `${num(row.bytesPerSpan)} B`,
          "with the SDK's default resource": ({ other }) => (other ? mib(other.heapBytes) : '—'),
          'heap per span': ({ other }) => (other ? `${num(other.bytesPerSpan)} B` : '—'),
        },
      ),
      `Ours: ${link(OURS)}, ${load(ours.loadavgBefore, ours.loadavgAfter)}; ` +
        `the SDK's default resource: ${link(SDK_DEFAULT)}, ${load(sdk.loadavgBefore, sdk.loadavgAfter)}; ${day(ours.startedAt)}.`,
    ].join('\n\n');
  },
};
