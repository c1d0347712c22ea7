// How far a streaming replica is behind its primary, in time, measured on one clock: the API's own. The
// replica's pg_last_xact_replay_timestamp() is the primary's commit time as the primary's clock read it, and
// on an idle primary it stays old while the replica is fully caught up; neither says how stale a read is.
// Instead the API notes the primary's flushed WAL position at each check, and a replica is as far behind as
// the oldest noted position it has not replayed yet.

/** A WAL position as PostgreSQL prints it ('16/B374D848'), as a byte offset. */
export function walOffset(lsn: string): bigint {
  const match = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i.exec(lsn);
  if (!match) throw new Error(`not a WAL position: ${lsn}`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

type Noted = { atMs: number; offset: bigint };

/** The primary's WAL positions noted over the last `keepMs`, and the lag of a replayed position against them. */
export class WalTimeline {
  private noted: Noted[] = [];

  constructor(private readonly keepMs: number) {}

  /** The primary's flushed position (`pg_current_wal_flush_lsn()`), read at `atMs`. */
  note(atMs: number, lsn: string): void {
    this.noted.push({ atMs, offset: walOffset(lsn) });
    // The oldest entry past the window is kept: a replica behind all the others is at least that far behind.
    while (this.noted.length > 1 && this.noted[1]!.atMs <= atMs - this.keepMs) this.noted.shift();
  }

  /**
   * Milliseconds since the primary first held WAL that `replayedLsn` does not cover: 0 when the replica
   * has replayed everything the primary had flushed when last noted, null before anything was noted.
   */
  lagMs(atMs: number, replayedLsn: string): number | null {
    if (this.noted.length === 0) return null;
    const replayed = walOffset(replayedLsn);
    const missing = this.noted.find((n) => n.offset > replayed);
    return missing === undefined ? 0 : Math.max(0, atMs - missing.atMs);
  }
}
