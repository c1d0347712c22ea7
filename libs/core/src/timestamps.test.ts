import { describe, expect, it } from 'vitest';
import { formatTimestamp, parseTimestamp, secondsBetween } from './timestamps';

describe('parseTimestamp', () => {
  it('accepts ISO 8601 with milliseconds and Z, as the JS client sends', () => {
    expect(parseTimestamp('2026-01-02T03:04:05.678Z')?.iso).toBe('2026-01-02T03:04:05.678000Z');
  });
  it('keeps microseconds, as the Python client sends', () => {
    expect(parseTimestamp('2026-01-02T03:04:05.123456')?.iso).toBe('2026-01-02T03:04:05.123456Z');
  });
  it('accepts the answer format YYYY-MM-DD HH:MM:SS as UTC', () => {
    expect(parseTimestamp('2026-01-02 03:04:05')?.iso).toBe('2026-01-02T03:04:05.000000Z');
  });
  it('converts zone offsets to UTC', () => {
    expect(parseTimestamp('2026-01-02T03:04:05+02:00')?.iso).toBe('2026-01-02T01:04:05.000000Z');
    expect(parseTimestamp('2026-01-01T23:30:00-0130')?.iso).toBe('2026-01-02T01:00:00.000000Z');
    expect(parseTimestamp('2026-01-02 03:04:05.5+00')?.iso).toBe('2026-01-02T03:04:05.500000Z');
  });
  it('accepts a date alone and minutes without seconds', () => {
    expect(parseTimestamp('2026-01-02')?.iso).toBe('2026-01-02T00:00:00.000000Z');
    expect(parseTimestamp('2026-01-02T03:04')?.iso).toBe('2026-01-02T03:04:00.000000Z');
  });
  it('rejects what is not a timestamp', () => {
    for (const bad of [
      '',
      'yesterday',
      '2026-13-01',
      '2026-02-30T00:00:00Z',
      '2026-01-02T25:00:00',
      '2026-01-02T03:04:05+25:00',
      '12345',
      '2026-01-02T03:04:05Zjunk',
    ]) {
      expect(parseTimestamp(bad), bad).toBeNull();
    }
  });
});

describe('formatTimestamp', () => {
  it('answers YYYY-MM-DD HH:MM:SS in UTC', () => {
    expect(formatTimestamp(new Date('2026-01-02T03:04:05.678Z'))).toBe('2026-01-02 03:04:05');
    expect(formatTimestamp('2026-01-02T05:04:05.678+02:00')).toBe('2026-01-02 03:04:05');
    expect(formatTimestamp(null)).toBeNull();
  });
});

describe('secondsBetween', () => {
  it('is exact to the microsecond', () => {
    expect(secondsBetween('2026-01-02T03:04:05.000001Z', '2026-01-02T03:04:06.500002Z')).toBe(1.500001);
  });
});
