import { day, load, num, table } from './format.ts';
import type { FigureTable } from './types.ts';

/** What `node scripts/idle-cpu.ts --out …` writes. */
type IdleCpu = {
  date: string;
  revision: string;
  seconds: number;
  demoUptimeSeconds?: number;
  loadavg: { before: number[]; after: number[] };
  processes: { name: string; percentOfCore: number }[];
  total: { percentOfCore: number };
};

const IDLE = 'bench/results/idle-cpu.json';

/** The idle demo, no order placed and no console page open: each process's share of a core over one window. */
export const idleDemo: FigureTable = {
  sources: [IDLE],
  render({ read, link }) {
    const run = read<IdleCpu>(IDLE);
    const after =
      run.demoUptimeSeconds === undefined
        ? ''
        : `, starting ${num(run.demoUptimeSeconds)} s after \`./dev demo\``;
    return [
      table(
        ['process', '% of a core'],
        [
          ...run.processes.map((found) => [found.name, num(found.percentOfCore, 2)]),
          ['all of these (PostgreSQL not counted)', num(run.total.percentOfCore, 2)],
        ],
      ),
      '',
      `${link(IDLE)}: one ${num(run.seconds)} s window${after}, revision \`${run.revision}\`, ` +
        `${day(run.date)}, ${load(run.loadavg.before, run.loadavg.after)}.`,
    ].join('\n');
  },
};
