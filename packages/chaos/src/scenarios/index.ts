import type { Scenario } from '../scenario.ts';
import { brokerKill9 } from './brokerKill9.ts';

/** Every scenario `npm run chaos -- all` runs, in that order. */
export const SCENARIOS: Scenario[] = [brokerKill9];

/** Scenarios run only by name: the broken build that proves the checker can fail. */
export const PROOFS: Scenario[] = [];

export function findScenario(name: string): Scenario | undefined {
  return [...SCENARIOS, ...PROOFS].find((scenario) => scenario.name === name);
}
