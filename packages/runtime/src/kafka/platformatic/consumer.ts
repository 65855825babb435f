import type { MessagesStream } from '@platformatic/kafka';
import { exponentialDelayMs } from '../../backoff.ts';
import type { GroupMember, GroupMemberOptions } from '../ports.ts';
import { settleWithin } from '../settleWithin.ts';
import { FencedConsumer } from './fencedConsumer.ts';
import { Lanes } from './lanes.ts';
import { baseOptions, type PlatformaticOptions } from './options.ts';

type Bytes = Buffer | undefined;
type Running = {
  consumer: FencedConsumer;
  stream: MessagesStream<Bytes, Bytes, Bytes, Bytes>;
  lanes: Lanes;
};

/** kafkajs's defaults, so both clients' members are dropped and rebalanced on the same terms. */
const SESSION_TIMEOUT_MS = 30_000;
const REBALANCE_TIMEOUT_MS = 60_000;
/** The wait before a failed stream's successor starts: 0.5 s, doubling while each fails too, up to 30 s. */
const RESTART_BASE_MS = 500;
const RESTART_CAP_MS = 30_000;
/** Failed restarts in a row after which the consumer itself is replaced, not only its stream. */
const RESTARTS_BEFORE_REPLACING = 3;
/** How long a failed member may take to leave the group before it is closed by force. */
const LEAVE_BOUND_MS = 5_000;
/**
 * The member's own retry budget: two retries, 250 ms then 500 ms apart. The client retries a fetch
 * and, inside each attempt, the metadata it needs, each with this budget: with the services'
 * budget (ten retries up to 2 s apart) a fetch from a killed broker failed only after 40 s, and the
 * partitions it served applied nothing meanwhile. Failing within seconds hands over to a new
 * stream, which reads the cluster's metadata afresh.
 */
const MEMBER_RETRIES = 2;
const MEMBER_RETRY_DELAY_MS = 250;

/**
 * The @platformatic/kafka adapter of the project's group member (GroupMember, ports.ts): a
 * consumer whose stream reads from the committed offsets (a new group from the earliest), offsets
 * committed by the loop only (no autocommit), and the stream's messages cut into per-partition
 * batches (lanes.ts).
 *
 * The client gives up on its stream for good when a fetch fails its retries (a broker killed), and
 * stops heartbeating when a rejoin fails (the coordinator killed): such a member consumes nothing
 * more. So when the stream or the consumer fails, or the heartbeats stall for a session timeout,
 * the stream is closed and a new one started on the same consumer after a backoff: it rejoins
 * under the same member id, finds the coordinator and reads from the committed offsets. A new
 * consumer would be a new member, and the group would wait for the old one's session to time out
 * before it rebalances when the old one could not leave (its coordinator dead): 30 s without any
 * member applying, seen in the coordinator-kill scenario. The consumer itself is replaced only
 * when its restarts keep failing.
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
  /** Restarts since the member last joined: set the next one's wait, and whether to replace the consumer. */
  #attempts = 0;
  #timer: NodeJS.Timeout | undefined;
  #restarting: Promise<void> | undefined;

  constructor(client: PlatformaticOptions, options: GroupMemberOptions) {
    this.#client = client;
    this.#options = options;
  }

  async start(): Promise<void> {
    const consumer = this.#newConsumer();
    try {
      this.#running = await this.#consume(consumer);
    } catch (err) {
      await consumer.close(true).catch(() => undefined);
      throw err;
    }
  }

  problem(): string | undefined {
    return this.#failure && `the group member failed (${this.#failure}); restarting it`;
  }

  async stopWatching(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#restarting;
  }

  async leave(): Promise<void> {
    const running = this.#running;
    this.#running = undefined;
    if (!running) return;
    await closeStream(running);
    await running.consumer.close();
  }

  #newConsumer(): FencedConsumer {
    const { groupId, heartbeatIntervalMs } = this.#options;
    const sessionTimeout = this.#options.sessionTimeoutMs ?? SESSION_TIMEOUT_MS;
    const consumerProtocol = this.#client.groupProtocol === 'consumer';
    // The consumer protocol takes the session timeout and the heartbeat interval from the broker
    // (group.consumer.session.timeout.ms and group.consumer.heartbeat.interval.ms, 30 s and 3 s on
    // the dev stack's and compose's brokers); a member whose heartbeats go unanswered for
    // sessionTimeoutMs is restarted, as a classic one is.
    const group = consumerProtocol
      ? { groupProtocol: 'consumer' as const }
      : { sessionTimeout, heartbeatInterval: heartbeatIntervalMs };
    const consumer = new FencedConsumer({
      ...baseOptions({
        ...this.#client,
        retry: { retries: MEMBER_RETRIES, initialRetryTime: MEMBER_RETRY_DELAY_MS, maxRetryTime: 1_000 },
      }),
      groupId,
      ...group,
      rebalanceTimeout: REBALANCE_TIMEOUT_MS,
      heartbeatStallTimeout: sessionTimeout,
      autocommit: false,
    });
    // Without a listener an 'error' event would end the process; a failed rejoin is one.
    consumer.on('error', (err: unknown) => this.#failed(consumer, err));
    consumer.on('consumer:heartbeat:stalled', () =>
      this.#failed(consumer, new Error(`no heartbeat answered for ${sessionTimeout} ms`)),
    );
    // The consumer protocol changes the partitions held by heartbeat, with no generation to join.
    if (consumerProtocol) {
      consumer.on('consumer:heartbeat:end', () => {
        if (this.#running?.consumer === consumer) this.#running.lanes.reassigned();
      });
    }
    consumer.on('consumer:group:join', () => {
      if (this.#running?.consumer !== consumer) return;
      if (!consumerProtocol) this.#running.lanes.rebalanced();
      // Back in the group: the next failure starts the backoff afresh.
      this.#attempts = 0;
      this.#failure = undefined;
    });
    return consumer;
  }

  /** A stream on `consumer` (joining the group first when it is not a member), cut into lanes. */
  async #consume(consumer: Running['consumer']): Promise<Running> {
    const stream = await consumer.consume({
      topics: this.#options.topics,
      mode: 'committed',
      fallbackMode: 'earliest',
    });
    const lanes = new Lanes(consumer, stream, this.#options, (err) => this.#failed(consumer, err));
    stream.on('data', (message) => lanes.push(message));
    stream.on('error', (err: unknown) => this.#failed(consumer, err));
    return { consumer, stream, lanes };
  }

  /** The member `consumer` belongs to failed: restarted after a backoff, unless that is under way. */
  #failed(consumer: Running['consumer'], err: unknown): void {
    if (this.#stopped || this.#running?.consumer !== consumer || this.#timer || this.#restarting) return;
    this.#failure = err instanceof Error ? err.message : String(err);
    this.#options.logger.warn({ err }, 'the group member failed: restarting it');
    this.#attempts += 1;
    const delayMs = exponentialDelayMs(this.#attempts, RESTART_BASE_MS, RESTART_CAP_MS);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      const failed = this.#running;
      if (!failed) return;
      this.#restarting = this.#restart(failed).then(
        () => {
          this.#restarting = undefined;
        },
        (restartErr: unknown) => {
          this.#restarting = undefined;
          this.#failed(this.#running?.consumer ?? failed.consumer, restartErr);
        },
      );
    }, delayMs);
  }

  /**
   * A new stream in place of the failed one, on the same consumer, or on a new consumer when the
   * restarts keep failing. Until one starts, the failed member stays current, stream closed.
   */
  async #restart(failed: Running): Promise<void> {
    await closeStream(failed);
    this.#options.onReplaced();
    if (this.#stopped) return;
    let consumer = failed.consumer;
    if (this.#attempts > RESTARTS_BEFORE_REPLACING) {
      await settleWithin(consumer.close(), LEAVE_BOUND_MS).catch(() => consumer.close(true).catch(() => {}));
      consumer = this.#newConsumer();
      this.#running = { ...failed, consumer };
    }
    this.#running = await this.#consume(consumer);
  }
}

/** Stops the lanes (the batches in progress finish), then the stream. */
async function closeStream({ stream, lanes }: Running): Promise<void> {
  await lanes.stop();
  await stream.close().catch(() => undefined);
}
