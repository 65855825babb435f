/**
 * The relay's wake-up: it sleeps until one arrives or the poll interval passes, whichever is
 * first. Wake-ups come from the outbox trigger's NOTIFY (polling/notifyListener.ts calls wake),
 * from the relay itself when a mark made an aggregate's next event its head, and from stop().
 * NOTIFY gives low latency; the poll is the safety net (a notification sent while the listening
 * connection was down is lost, and the poll still finds the row).
 *
 * A wake-up means "something may be claimable that the last claim could not see". One that
 * arrives while the relay is busy is kept, and the relay reads it to decide whether to claim again.
 */
export class Wakeup {
  /** Whoever waits for the next wake-up: a sleep, or a publish racing one (wokenBefore). */
  readonly #waiters = new Set<() => void>();
  /** A wake-up arrived since the last reset or sleep: the next sleep returns at once. */
  #notified = false;

  /** Ends the current sleep (or makes the next one return at once) and answers wokenBefore. */
  wake(): void {
    this.#notified = true;
    for (const waiter of this.#waiters) waiter();
  }

  /**
   * Forget the wake-ups received so far; the relay calls it right before each claim. What they
   * announced was committed before the claim starts, so the claim sees it: only a wake-up that
   * arrives after this may announce a row the claim missed.
   */
  reset(): void {
    this.#notified = false;
  }

  /** A wake-up arrived since the last reset or sleep: a sleep now would return at once. */
  get pending(): boolean {
    return this.#notified;
  }

  /**
   * Until the poll interval or a wake-up; at once if one arrived since the last reset or sleep.
   * Resolves true only when a wake-up ended a sleep that waited: the relay was idle (the relay's
   * linger waits after those alone).
   */
  sleep(ms: number): Promise<boolean> {
    if (this.#notified) {
      this.#notified = false;
      return Promise.resolve(false);
    }
    return new Promise((resolve) => {
      const done = (woken: boolean) => {
        clearTimeout(timer);
        this.#waiters.delete(onWake);
        this.#notified = false;
        resolve(woken);
      };
      const onWake = () => done(true);
      const timer = setTimeout(() => done(false), ms);
      this.#waiters.add(onWake);
    });
  }

  /**
   * True as soon as a wake-up arrives (at once if one already did since the last reset), false
   * if `work` settles first. Does not consume the wake-up.
   */
  async wokenBefore(work: Promise<unknown>): Promise<boolean> {
    if (this.#notified) return true;
    let woken = () => {};
    const wakeUp = new Promise<boolean>((resolve) => {
      woken = () => resolve(true);
    });
    this.#waiters.add(woken);
    try {
      return await Promise.race([
        wakeUp,
        work.then(
          () => false,
          () => false,
        ),
      ]);
    } finally {
      this.#waiters.delete(woken);
    }
  }
}
