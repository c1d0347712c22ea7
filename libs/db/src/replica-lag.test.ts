import { describe, expect, it } from 'vitest';
import { WalTimeline, walOffset } from './replica-lag';

describe('walOffset', () => {
  it('reads both halves of a position, so that positions past 4 GiB order correctly', () => {
    expect(walOffset('0/0')).toBe(0n);
    expect(walOffset('0/16B3748')).toBe(0x16b3748n);
    expect(walOffset('16/B374D848')).toBe((0x16n << 32n) + 0xb374d848n);
    expect(walOffset('1/0') > walOffset('0/FFFFFFFF')).toBe(true);
  });
  it('refuses what is not a position', () => {
    expect(() => walOffset('16-B374D848')).toThrow(/not a WAL position/);
  });
});

describe('WalTimeline', () => {
  it('knows nothing before the primary was noted', () => {
    expect(new WalTimeline(60_000).lagMs(0, '0/100')).toBeNull();
  });
  it('counts a replica that replayed what the primary last held as caught up', () => {
    const timeline = new WalTimeline(60_000);
    timeline.note(1_000, '0/100');
    timeline.note(2_000, '0/200');
    expect(timeline.lagMs(2_500, '0/200')).toBe(0);
    expect(timeline.lagMs(2_500, '0/300')).toBe(0);
  });
  it('measures a replica from the first noted position it has not replayed', () => {
    const timeline = new WalTimeline(60_000);
    timeline.note(1_000, '0/100');
    timeline.note(2_000, '0/200');
    timeline.note(3_000, '0/300');
    expect(timeline.lagMs(3_500, '0/100')).toBe(1_500);
    expect(timeline.lagMs(3_500, '0/250')).toBe(500);
    expect(timeline.lagMs(3_500, '0/50')).toBe(2_500);
  });
  it('keeps a replica stopped long ago at least as far behind as its window', () => {
    const timeline = new WalTimeline(10_000);
    for (let at = 0; at <= 60_000; at += 1_000) timeline.note(at, `0/${(at + 1).toString(16)}`);
    expect(timeline.lagMs(60_000, '0/0')).toBeGreaterThanOrEqual(10_000);
  });
  it('sees an idle primary, whose position does not move, as nothing to be behind on', () => {
    const timeline = new WalTimeline(10_000);
    for (let at = 0; at <= 60_000; at += 1_000) timeline.note(at, '0/500');
    expect(timeline.lagMs(60_000, '0/500')).toBe(0);
    expect(timeline.lagMs(60_000, '0/400')).toBeGreaterThanOrEqual(10_000);
  });
});
