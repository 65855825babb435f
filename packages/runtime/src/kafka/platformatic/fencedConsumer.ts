import { type CallbackWithPromise, Consumer, type FetchOptions, type fetchV17 } from '@platformatic/kafka';

type Bytes = Buffer | undefined;
/** The fetch answer type the client's consumer declares (the newest Fetch version it speaks). */
type FetchResponse = fetchV17.FetchResponse;

/**
 * A consumer whose fetch answers are dropped when the partitions the member holds changed while
 * the fetch waited on the broker.
 *
 * The client's stream moves a partition's position to the end of whatever a fetch brings back,
 * whenever that fetch was sent. A fetch sent before a partition was taken away and given back
 * (two quick rebalances inside one long poll) can answer after the stream has read the committed
 * offset again: its messages start past that offset, the ones in between were fetched before and
 * dropped with the partition, and the member would apply the later ones and commit past a gap (a
 * loss seen in the group member contract test, three messages of one partition). An answer to a
 * fetch sent under an older assignment carries no records here, so the stream keeps the position
 * it read from the committed offsets and asks again from there. A partition the member held
 * throughout is asked again from the same position: its messages come once more, one long poll
 * later.
 *
 * The member also forgets every fetch position at a rebalance (lanes.ts), and the stream reads
 * them back from the committed offsets. A fetch the stream began before that (it reads the
 * cluster's metadata first) is then built with no position for a partition: such a request is
 * answered with nothing, without asking the broker, and the stream asks again once it has read its
 * positions back. Sent as built, its missing offset failed the request three times, and the stream
 * with it.
 */
export class FencedConsumer extends Consumer<Bytes, Bytes, Bytes, Bytes> {
  /** Counts the changes of the partitions held: a fetch sent under an older count is stale. */
  #assignment = 0;

  /** Called each time the partitions held change, before the stream reads its new positions. */
  assignmentChanged(): void {
    this.#assignment += 1;
  }

  override fetch(
    options: FetchOptions<Bytes, Bytes, Bytes, Bytes>,
    callback: CallbackWithPromise<FetchResponse>,
  ): void;
  override fetch(options: FetchOptions<Bytes, Bytes, Bytes, Bytes>): Promise<FetchResponse>;
  override fetch(
    options: FetchOptions<Bytes, Bytes, Bytes, Bytes>,
    callback?: CallbackWithPromise<FetchResponse>,
  ): Promise<FetchResponse> | undefined {
    if (!callback) {
      return new Promise((resolve, reject) =>
        this.fetch(options, (error, response) => (error || !response ? reject(error) : resolve(response))),
      );
    }
    if (options.topics.some(({ partitions }) => partitions.some((p) => p.fetchOffset === undefined))) {
      process.nextTick(() =>
        callback(null, { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [] }),
      );
      return undefined;
    }
    const sentUnder = this.#assignment;
    super.fetch(options, (error, response) => {
      if (response && sentUnder !== this.#assignment) withoutRecords(response);
      callback(error, response);
    });
    return undefined;
  }
}

function withoutRecords(response: FetchResponse): void {
  for (const topic of response.responses) for (const partition of topic.partitions) partition.records = null;
}
