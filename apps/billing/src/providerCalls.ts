/**
 * At most this many calls to the payment provider at once, per step of a chunk (a chunk holds up
 * to 200 events). Unbounded, a backlog would fire a chunk's calls all at once at the provider;
 * one at a time, a chunk of cancels waited for each void in turn inside its transaction.
 */
export const PROVIDER_CALLS_AT_ONCE = 8;

/**
 * Run `call` for every item, at most PROVIDER_CALLS_AT_ONCE at a time, and wait for all of them.
 * The failures are returned with their item's index, earliest first; the calls that succeeded
 * are done either way (every provider call is idempotent, so a retry may repeat it).
 */
export async function callProvider<T>(
  items: readonly T[],
  call: (item: T, index: number) => Promise<void>,
): Promise<{ index: number; error: unknown }[]> {
  const failures: { index: number; error: unknown }[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      try {
        await call(items[index] as T, index);
      } catch (error) {
        failures.push({ index, error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PROVIDER_CALLS_AT_ONCE, items.length) }, worker));
  return failures.sort((a, b) => a.index - b.index);
}
