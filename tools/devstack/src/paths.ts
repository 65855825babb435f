import { resolve } from 'node:path';

/** The monorepo root, derived from this file's location so it works from any working directory. */
export const repoRoot = resolve(import.meta.dirname, '../../..');

/** Git-ignored scratch space for jars, broker data and logs. */
export const localDir = resolve(repoRoot, '.local');
