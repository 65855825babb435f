import { Consumer, type MessagesStream } from '@platformatic/kafka';
import { exponentialDelayMs } from '../../backoff.ts';
import type { GroupMember, GroupMemberOptions } from '../ports.ts';
import { settleWithin } from '../settleWithin.ts';
import { Lanes } from './lanes.ts';
import { baseOptions, type PlatformaticOptions } from './options.ts';

type Bytes = Buffer | undefined;
type Running = {
  consumer: Consumer<Bytes, Bytes, Bytes, Bytes>;
  stream: MessagesStream<Bytes, Bytes, Bytes, Bytes>;
  lanes: Lanes;
};

/** kafkajs's defaults, so both clients' members are dropped and rebalanced on the same terms. */
const SESSION_TIMEOUT_MS = 30_000;
const REBALANCE_TIMEOUT_MS = 60_000;
/** The wait before a failed member's successor starts: 1 s, doubling while each fails too, up to 30 s. */
const REPLACE_BASE_MS = 1_000;
const REPLACE_CAP_MS = 30_000;
/** How long a failed member may take to leave the group before it is closed by force. */
const LEAVE_BOUND_MS = 5_000;

/**
 * The @platformatic/kafka adapter of the project's group member (GroupMember, ports.ts): a
 * consumer whose stream reads from the committed offsets (a new group from the earliest), offsets
 * committed by the loop only (no autocommit), and the stream's messages cut into per-partition
 * batches (lanes.ts).
 *
 * The client gives up on its stream for good when a fetch fails its retries (a broker killed), and
 * stops heartbeating when a rejoin fails (the coordinator killed): such a member consumes nothing
 * more. So a member whose stream or consumer fails, or whose heartbeats stall for a session
 * timeout, is closed and replaced by a new one after a backoff; the new one finds the coordinator
 * and reads from the committed offsets.
 */
export async function platformaticGroupMember(
  client: PlatformaticOptions,
  options: GroupMemberOptions,
): Promise<GroupMember> {
  const member = new PlatformaticMember(client, options);
  await member.start();
  return member;
}

class PlatformaticMember implements GroupMember {
  readonly #client: PlatformaticOptions;
  readonly #options: GroupMemberOptions;
  #running: Running | undefined;
  #failure: string | undefined;
  #stopped = false;
  #attempts = 0;
  #timer: NodeJS.Timeout | undefined;
  #replacing: Promise<void> | undefined;

  constructor(client: PlatformaticOptions, options: GroupMemberOptions) {
    this.#client = client;
    this.#options = options;
  }

  async start(): Promise<void> {
    this.#running = await this.#startOne();
  }

  problem(): string | undefined {
    return this.#failure && `the group member failed (${this.#failure}); replacing it`;
  }

  async stopWatching(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#replacing;
  }

  async leave(): Promise<void> {
    const running = this.#running;
    this.#running = undefined;
    if (running) await close(running, false);
  }

  async #startOne(): Promise<Running> {
    const { groupId, topics, heartbeatIntervalMs } = this.#options;
    const sessionTimeout = this.#options.sessionTimeoutMs ?? SESSION_TIMEOUT_MS;
    const consumer = new Consumer<Bytes, Bytes, Bytes, Bytes>({
      ...baseOptions(this.#client),
      groupId,
      sessionTimeout,
      rebalanceTimeout: REBALANCE_TIMEOUT_MS,
      heartbeatInterval: heartbeatIntervalMs,
      heartbeatStallTimeout: sessionTimeout,
      autocommit: false,
    });
    // Without a listener an 'error' event would end the process; a failed rejoin is one.
    consumer.on('error', (err: unknown) => this.#failed(consumer, err));
    consumer.on('consumer:heartbeat:stalled', () =>
      this.#failed(consumer, new Error(`no heartbeat answered for ${sessionTimeout} ms`)),
    );
    try {
      const stream = await consumer.consume({ topics, mode: 'committed', fallbackMode: 'earliest' });
      const lanes = new Lanes(consumer, stream, this.#options, (err) => this.#failed(consumer, err));
      consumer.on('consumer:group:join', () => lanes.rebalanced());
      stream.on('data', (message) => lanes.push(message));
      stream.on('error', (err: unknown) => this.#failed(consumer, err));
      return { consumer, stream, lanes };
    } catch (err) {
      await consumer.close(true).catch(() => undefined);
      throw err;
    }
  }

  /** The member `consumer` belongs to failed: replaced after a backoff, unless it already was. */
  #failed(consumer: Running['consumer'], err: unknown): void {
    if (this.#stopped || this.#running?.consumer !== consumer || this.#timer || this.#replacing) return;
    this.#failure = err instanceof Error ? err.message : String(err);
    this.#options.logger.warn({ err }, 'the group member failed: replacing it');
    this.#attempts += 1;
    const delayMs = exponentialDelayMs(this.#attempts, REPLACE_BASE_MS, REPLACE_CAP_MS);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      const old = this.#running;
      this.#replacing = this.#replace(old).then(
        () => {
          this.#replacing = undefined;
        },
        (startErr: unknown) => {
          this.#replacing = undefined;
          // The old member stays current (closed) until a successor starts: tried again later.
          if (old) this.#failed(old.consumer, startErr);
        },
      );
    }, delayMs);
  }

  async #replace(old: Running | undefined): Promise<void> {
    if (old) await close(old, true);
    this.#options.onReplaced();
    if (this.#stopped) return;
    this.#running = await this.#startOne();
    this.#failure = undefined;
    this.#attempts = 0;
  }
}

/**
 * Stops the lanes (the batches in progress finish), then the stream and the consumer, which leaves
 * the group. A failed member's leave may hang on a dead coordinator: bounded, then closed by force.
 */
async function close({ consumer, stream, lanes }: Running, failed: boolean): Promise<void> {
  await lanes.stop();
  await stream.close().catch(() => undefined);
  if (!failed) return consumer.close();
  await settleWithin(consumer.close(), LEAVE_BOUND_MS).catch(() =>
    consumer.close(true).catch(() => undefined),
  );
}
