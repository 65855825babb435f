/** Each Node process's CPU profile, split by library over the load window. */
import type { startChaosStack } from '@outbox/chaos';
import { type ProfileShares, profileShares, readProfiles } from '../support/cpuProfile.ts';
import { logger } from '../support/environment.ts';
import { STACK_PROCESSES as PROCESSES } from '../support/stack.ts';

const log = logger('where-time-goes');

/** Each Node process's profile, written when it exits: the processes are stopped here for that. */
export async function profilesOf(
  stack: Awaited<ReturnType<typeof startChaosStack>>,
  dir: string,
  window: { fromUs: number; toUs: number },
): Promise<Record<string, ProfileShares>> {
  const pidOf = new Map(PROCESSES.map((name) => [stack.process(name).pid, name]));
  await Promise.all(PROCESSES.map((name) => stack.process(name).stop()));
  const shares: Record<string, ProfileShares> = {};
  for (const [pid, profile] of readProfiles(dir)) {
    const name = pidOf.get(pid);
    if (name) shares[name] = profileShares(profile, window);
  }
  log(`profiles in ${dir} (Chrome DevTools and speedscope open them)`);
  return shares;
}
