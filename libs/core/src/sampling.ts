import { createHash } from 'node:crypto';

/** A stable number in [0, 1) for an id: the same id gives the same number on every node and every retry. */
export function unitHash(id: string): number {
  return createHash('sha256').update(id.toLowerCase()).digest().readUInt32BE(0) / 2 ** 32;
}

/** Sampling is decided per whole trace, so every span of a trace is kept or dropped together. */
export function isSampledIn(rootTraceId: string, rate: number | null | undefined): boolean {
  if (rate == null || rate >= 1) return true;
  if (rate <= 0) return false;
  return unitHash(rootTraceId) < rate;
}
