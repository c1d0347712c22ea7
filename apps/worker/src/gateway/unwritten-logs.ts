/**
 * The completion logs this process answered and is still writing to PostgreSQL.
 *
 * A completion's job ends once its caller has the answer, without waiting for its log's write: the log is
 * already in Redis by then (kept in the reservation journal, written by the upkeep should this process
 * die), so the write adds nothing to its durability, and waiting for it kept the job's slot, and its
 * lane's (a provider's concurrency limit), from the next call for as long as PostgreSQL took (issue 39's
 * burst spent more time there than in the provider). Past `max` writes at once (PostgreSQL falling
 * behind), a job waits for its own log again, so that the calls wait in their queue rather than in this
 * process's memory. A closing worker waits for them (`settled`).
 */
export class UnwrittenLogs {
  readonly #writes = new Set<Promise<void>>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  /** Takes a log's write, which must not reject; resolves at once, or once it is written when too many are. */
  async add(write: Promise<void>): Promise<void> {
    this.#writes.add(write);
    const done = () => this.#writes.delete(write);
    void write.then(done, done);
    if (this.#writes.size > this.#max) await write;
  }

  /** Resolves once every write taken so far has ended. */
  async settled(): Promise<void> {
    await Promise.all(this.#writes);
  }
}
