import { markdownTable } from '@outbox/devstack/table';
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
      markdownTable(
        [
          'spans stored',
          'heap after a full GC, our spans',
          'heap per span, ours',
          "with the SDK's default resource",
          'heap per span',
        ],
        ours.rows.map((row, index) => {
          const other = sdk.rows[index];
          return [
            num(row.spans),
            mib(row.heapBytes),
            `${num(row.bytesPerSpan)} B`,
            other ? mib(other.heapBytes) : '—',
            other ? `${num(other.bytesPerSpan)} B` : '—',
          ];
        }),
      ),
      `Ours: ${link(OURS)}, ${load(ours.loadavgBefore, ours.loadavgAfter)}; ` +
        `the SDK's default resource: ${link(SDK_DEFAULT)}, ${load(sdk.loadavgBefore, sdk.loadavgAfter)}; ${day(ours.startedAt)}.`,
    ].join('\n\n');
  },
};
