// `./dev compose up`, first step: the build contexts in .local/compose/ (buildContexts.ts).
import { stageBuildContexts } from './buildContexts.ts';

const started = Date.now();
const staging = await stageBuildContexts((line) => console.log(`compose: ${line}`));
console.log(`compose: build contexts staged in ${staging} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
