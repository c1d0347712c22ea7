/**
 * The provider calls this process is making now, by lane: counted by the gateway around each call, read by
 * the lane's adaptive concurrency when the provider first refuses one (see adaptive-concurrency.ts).
 */
export class CallsInFlight {
  readonly #byLane = new Map<string, number>();

  /** A call on the lane goes to its provider. */
  start(laneId: string): void {
    this.#byLane.set(laneId, this.count(laneId) + 1);
  }

  /** A call on the lane is over (answered or failed). */
  end(laneId: string): void {
    const left = this.count(laneId) - 1;
    if (left > 0) this.#byLane.set(laneId, left);
    else this.#byLane.delete(laneId);
  }

  /** The calls on the lane in flight now (0 when none). */
  count(laneId: string): number {
    return this.#byLane.get(laneId) ?? 0;
  }
}
