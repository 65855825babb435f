import type { Scenario } from '../scenario.ts';
import { startAndAwaitCrash } from './support.ts';

/**
 * The proof that the checker can fail: the orders consumer built without its duplicate check
 * (INBOX_DEDUP=off), then made to receive a reply twice (killed between its commit and its
 * offset commit). Inventory and billing are left intact: with dedup off their second line of
 * defence (primary keys on reservations and payments) would refuse the second effect and stall
 * the partition instead, a louder failure; the orders history has no such key.
 */
export const brokenDedup: Scenario = {
  name: 'broken-build-dedup-off',
  breaks:
    'a broken build: the orders consumer applies redelivered events again (INBOX_DEDUP=off), and is killed after a commit so a reply is redelivered',
  expectation:
    'The checker FAILS applied-exactly-once: the redelivered reply is recorded twice in the order history.',
  load: { rate: 10, durationMs: 10_000 },
  inject: async (context) => {
    await context.sleep(2_000);
    await context.stack.process('orders').stop();
    context.fault('orders restarted with INBOX_DEDUP=off and FAULT_KILL_AFTER_COMMIT=true');
    // The trigger order makes sure a reply reaches the armed consumer, however late it joined.
    const crashed = await startAndAwaitCrash(
      context,
      'orders',
      { INBOX_DEDUP: 'off', FAULT_KILL_AFTER_COMMIT: 'true' },
      { timeoutMs: 60_000, trigger: true },
    );
    context.log(crashed ? 'orders killed itself after its commit' : 'orders: fault did not fire');
    await context.stack.restart('orders', { INBOX_DEDUP: 'off' });
    context.restored('orders restarted, still with INBOX_DEDUP=off');
  },
};
