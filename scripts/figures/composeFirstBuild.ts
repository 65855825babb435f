import { markdownTable } from '@outbox/devstack/table';
import type { FirstBuild } from '../../bench/compose-first-build.ts';
import type { Written } from '../../bench/support/environment.ts';
import { resultsFile } from '../../bench/support/results.ts';
import { day, load, num } from './format.ts';
import { ofFile } from './types.ts';

const FIRST_BUILD = resultsFile('compose-first-build.json');
const minutes = (seconds: number) => `${num(seconds / 60, 1)} min`;

/** `./dev compose up` from a fresh clone on a Docker with no image: each phase, then an order and down. */
export const composeFirstBuild = ofFile<Written<FirstBuild>>(FIRST_BUILD, (result, link) => {
  if (!result.firstBuild) throw new Error(`${FIRST_BUILD} is not a first build: Docker held images`);
  return [
    markdownTable(
      ['`./dev compose up` on a machine with no image', 'time'],
      [
        ...result.upPhases
          .filter((phase) => phase.seconds >= 0.5)
          .map((phase) => [phase.phase, `${num(phase.seconds)} s`]),
        ['**all of it**', `**${minutes(result.upSeconds)}**`],
      ],
    ),
    `Then an order through the API was ${result.order.status} ${num(result.order.secondsToDecision, 1)} s later, ` +
      `and \`./dev compose down\` took ${num(result.downSeconds)} s. ${link(FIRST_BUILD)}: a fresh clone at ` +
      `\`${result.run.revision}\`, ${day(result.run.startedAt)}, ${result.run.cpuModel} × ${result.machine.cpus}, ` +
      `${load(result.run.loadBefore, result.run.loadAfter)}, ${num(result.loadAverage.while1m.min, 1)} to ` +
      `${num(result.loadAverage.while1m.max, 1)} while it ran, tracing on: this machine's times at that load.`,
  ].join('\n\n');
});
