/** kafkajs's error names for a broker that cannot be reached or did not answer. */
const UNREACHABLE = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
]);

/** Protocol errors of a coordinator that moved, or is taking a group over. */
const COORDINATOR_MOVED = new Set(['GROUP_COORDINATOR_NOT_AVAILABLE', 'GROUP_LOAD_IN_PROGRESS']);

/**
 * A heartbeat that failed because the group's coordinator is gone (dead, frozen, or the group
 * moved), as an error kafkajs's runner answers by rejoining at once; any other error unchanged.
 *
 * kafkajs finds a group's coordinator only when it joins: a heartbeat failing because the
 * coordinator died is to kafkajs a failed batch, retried with a growing backoff against the same
 * dead broker, then a crash and a restart as long again (45 s in all, seen on a three-broker
 * cluster). A rebalancing error (NOT_COORDINATOR_FOR_GROUP) makes its runner rejoin instead,
 * which asks the cluster for the coordinator again.
 */
export function asRejoinIfCoordinatorLost(err: unknown): unknown {
  if (!coordinatorLost(err)) return err;
  return new CoordinatorLostError(err);
}

/** Read by kafkajs's runner as its own NOT_COORDINATOR_FOR_GROUP protocol error: rejoin. */
class CoordinatorLostError extends Error {
  readonly type = 'NOT_COORDINATOR_FOR_GROUP';
  readonly retriable = true;

  constructor(cause: unknown) {
    super(
      `the group coordinator is gone (${cause instanceof Error ? cause.message : String(cause)}); rejoining`,
      {
        cause,
      },
    );
    this.name = 'CoordinatorLostError';
  }
}

function coordinatorLost(err: unknown): boolean {
  return anyCause(
    err,
    (e) => UNREACHABLE.has(e.name) || COORDINATOR_MOVED.has((e as { type?: unknown }).type as string),
  );
}

/** A request answered by a broker that does not coordinate the group (kafkajs's protocol error). */
export function refusedAsNotTheCoordinator(err: unknown): boolean {
  return anyCause(err, (e) => (e as { type?: unknown }).type === 'NOT_COORDINATOR_FOR_GROUP');
}

/** Whether `err` or an error in its chain of causes meets `test`. */
function anyCause(err: unknown, test: (e: Error) => boolean): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (test(e)) return true;
  return false;
}
