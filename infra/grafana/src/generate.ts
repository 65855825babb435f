// Writes the dashboards (this folder's code) as the JSON files Grafana provisions:
//   node infra/grafana/src/generate.ts          write infra/grafana/dashboards/*.json
//   node infra/grafana/src/generate.ts --check  exit 1 if a file differs from the code (CI)
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dashboardFiles, renderDashboard } from './index.ts';

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dashboards');
const check = process.argv.includes('--check');
let stale = 0;
for (const [file, build] of Object.entries(dashboardFiles)) {
  const target = path.join(dir, file);
  const json = renderDashboard(build());
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // a new dashboard: no file yet
  }
  if (current === json) continue;
  if (check) {
    console.error(`${path.relative(process.cwd(), target)} is stale: run node infra/grafana/src/generate.ts`);
    stale++;
  } else {
    writeFileSync(target, json);
    console.log(`wrote ${path.relative(process.cwd(), target)}`);
  }
}
process.exit(stale > 0 ? 1 : 0);
