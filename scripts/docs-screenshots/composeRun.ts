// The compose stack for the pictures of docs/docker.md: `./dev compose up`, the command the doc
// gives, with the console's admin token the pictures sign in with, and `./dev compose down` after.
// Its ports are the stack's own (docker-compose.yml publishes 8080, 3001, ... on 127.0.0.1), so it
// cannot run beside a developer's `./dev demo`; unlike the other parts it runs only when asked.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../../tests/docs/docReferences.ts';
import { capture } from './capture.ts';
import { orderRow, placeOrder, type Shots, statusOf } from './consolePage.ts';
import { DEMO_TOKEN, type DemoRun } from './demoRun.ts';

const dev = (args: string[]) =>
  execFileSync(join(repoRoot, 'dev'), ['compose', ...args], {
    cwd: repoRoot,
    env: { ...process.env, CONSOLE_ADMIN_TOKEN: DEMO_TOKEN },
    stdio: ['ignore', 'inherit', 'inherit'],
  });

/**
 * The stack as `./dev compose up` leaves it: started, or brought up to date when it runs already
 * (the console recreated with the pictures' token). Start from `./dev compose down` for a picture
 * of one order; OUTBOX_COMPOSE_BUILD=0 skips the image builds, as for `./dev compose up`.
 */
export async function startCompose(): Promise<DemoRun> {
  dev(['up']);
  return {
    consoleUrl: 'http://127.0.0.1:8080',
    ordersUrl: 'http://127.0.0.1:3001',
    stop: async () => {
      dev(['down']);
    },
  };
}

/** docs/docker.md: the form's order CONFIRMED in the console the compose stack serves. */
export async function composeScenes({ page, manifest }: Shots): Promise<void> {
  const id = await placeOrder(page, 'alice', 'KB-101');
  if (!id) throw new Error('the form did not place the order');
  await statusOf(page, id).filter({ hasText: 'CONFIRMED' }).waitFor({ timeout: 120_000 });
  await orderRow(page, id).locator('a', { hasText: 'trace' }).waitFor();
  await capture(
    manifest,
    [page.locator('#place-order'), page.locator('#orders')],
    'compose-console-order-confirmed',
  );
}
