import { WRITE_MODES, type WriteMode } from '@outbox/contracts';
import { requireBearerToken } from '@outbox/runtime/bearer-auth';
import { HttpProblem } from '@outbox/runtime/problem';
import { type RequestHandler, Router } from 'express';
import { z } from 'zod';
import { type DatabaseFailover, databaseFailoverRouter } from './databaseFailover.ts';
import type { DemoStatus, ProcessStatus } from './shared/apiTypes.ts';

export type { DatabaseFailover, FailoverAction } from './databaseFailover.ts';
export type { DatabasePairView, FailoverCost } from './shared/apiTypes.ts';

/** A process the local demo owns and lets a newcomer break: the broker, a service or a relay. */
export type ProcessControl = {
  isRunning(): boolean;
  /** Graceful: SIGTERM, the process finishes what it holds and exits. */
  stop(): Promise<void>;
  /** `kill -9`: no shutdown hooks, like a crash or a pulled plug. */
  kill(): Promise<void>;
  /** Start it again and wait until it is ready. */
  start(): Promise<void>;
};

/**
 * Only `scripts/demo.ts` provides these, because only the demo owns the processes. The console
 * of docker compose or production never gets them, so there the routes do not exist at all.
 */
export type DemoControls = {
  /** `broker` for the demo's single broker; `broker-1`, `broker-2`, `broker-3` on the cluster. */
  brokers: Record<string, ProcessControl>;
  /** The system's processes by name: orders, inventory, billing and the three relays. */
  services: Record<string, ProcessControl>;
  /** Switches orders between the outbox and the naive dual writes (the demo's orders allows it). */
  writeMode?: WriteModeSwitch;
  /** `./dev demo --failover`: each service database on a primary and a standby, to fail over. */
  databases?: DatabaseFailover;
};

/** Orders' write mode: `current` from its /healthz (undefined when it does not answer); `set` throws with its refusal. */
export type WriteModeSwitch = { current(): Promise<string | undefined>; set(mode: WriteMode): Promise<void> };

const writeModeRequest = z.strictObject({ mode: z.enum(WRITE_MODES) });

const ACTIONS = ['stop', 'kill', 'start'] as const;
const actionParams = z.object({ target: z.string().min(1), action: z.enum(ACTIONS) });

/**
 * `GET /api/demo` (what runs) and `POST /api/demo/:target/:action` with target `broker` or a
 * service's or relay's name, and action stop, kill or start. The POST needs the console's admin token. One
 * action per process at a time: a second click while the broker is starting gets a 409.
 */
export function demoControlsRouter(controls: DemoControls, adminToken: string): Router {
  const router = Router();
  const processes = new ProcessActions(controls);
  router.get('/', async (_req, res) => {
    const [current, databases] = await Promise.all([
      controls.writeMode?.current(),
      controls.databases?.status(),
    ]);
    const status: DemoStatus = {
      brokers: processes.statusOfAll(controls.brokers),
      services: processes.statusOfAll(controls.services),
      ...(controls.writeMode ? { writeMode: { modes: WRITE_MODES, ...(current ? { current } : {}) } } : {}),
      ...(databases ? { databases } : {}),
    };
    res.json(status);
  });
  const writeMode = controls.writeMode;
  if (writeMode) {
    router.post(
      '/write-mode',
      requireBearerToken(adminToken, 'CONSOLE_ADMIN_TOKEN'),
      switchWriteMode(writeMode),
    );
  }
  if (controls.databases) router.use('/databases', databaseFailoverRouter(controls.databases, adminToken));
  router.post('/:target/:action', requireBearerToken(adminToken, 'CONSOLE_ADMIN_TOKEN'), async (req, res) => {
    const params = actionParams.safeParse(req.params);
    if (!params.success) {
      throw new HttpProblem(400, 'Invalid demo action', `The action must be one of ${ACTIONS.join(', ')}.`);
    }
    res.json(await processes.run(params.data.target, params.data.action));
  });
  return router;
}

/**
 * `POST /api/demo/write-mode` with `{"mode": "commit-then-publish"}`: the lesson of
 * docs/walkthrough.md, "Break the naive way, then the outbox way". Admin token, like the rest.
 */
function switchWriteMode(writeMode: WriteModeSwitch): RequestHandler {
  return async (req, res) => {
    const parsed = writeModeRequest.safeParse(req.body);
    if (!parsed.success) {
      throw new HttpProblem(400, 'Invalid write mode', `Send {"mode": one of ${WRITE_MODES.join(', ')}}.`);
    }
    try {
      await writeMode.set(parsed.data.mode);
    } catch (err) {
      throw new HttpProblem(502, 'Orders did not switch', err instanceof Error ? err.message : String(err));
    }
    res.json({ mode: parsed.data.mode });
  };
}

/** Stop, kill -9 or start, one action per process at a time, remembering each one's last failure. */
class ProcessActions {
  private readonly targets: Map<string, ProcessControl>;
  private readonly busy = new Set<string>();
  private readonly lastErrors = new Map<string, string>();

  constructor(controls: DemoControls) {
    this.targets = new Map([...Object.entries(controls.brokers), ...Object.entries(controls.services)]);
  }

  statusOfAll(controls: Record<string, ProcessControl>): Record<string, ProcessStatus> {
    return Object.fromEntries(Object.entries(controls).map(([name, c]) => [name, this.statusOf(name, c)]));
  }

  async run(target: string, action: (typeof ACTIONS)[number]): Promise<ProcessStatus> {
    const control = this.targets.get(target);
    if (!control) {
      const known = [...this.targets.keys()].join(', ');
      throw new HttpProblem(400, 'Invalid demo target', `The target must be one of ${known}.`);
    }
    if (this.busy.has(target)) {
      throw new HttpProblem(
        409,
        'Busy',
        `${target} is still handling the previous action; try again in a moment.`,
      );
    }
    const running = control.isRunning();
    if (action === 'start' ? running : !running) {
      throw new HttpProblem(
        409,
        'Nothing to do',
        `${target} is ${running ? 'already running' : 'not running'}.`,
      );
    }
    this.busy.add(target);
    try {
      await control[action]();
      this.lastErrors.delete(target);
    } catch (err) {
      this.lastErrors.set(target, err instanceof Error ? err.message : String(err));
      throw new HttpProblem(500, `Could not ${action} ${target}`, this.lastErrors.get(target) ?? '');
    } finally {
      this.busy.delete(target);
    }
    return this.statusOf(target, control);
  }

  private statusOf(name: string, control: ProcessControl): ProcessStatus {
    const lastError = this.lastErrors.get(name);
    return { running: control.isRunning(), busy: this.busy.has(name), ...(lastError ? { lastError } : {}) };
  }
}
