import { describe, expect, it } from 'vitest';
import { budgetWindow } from './budget-spend';

describe('budgetWindow', () => {
  it('is the UTC day holding the time', () => {
    const w = budgetWindow('day', Date.parse('2026-03-02T23:59:59.999Z'));
    expect(new Date(w.start).toISOString()).toBe('2026-03-02T00:00:00.000Z');
    expect(new Date(w.end).toISOString()).toBe('2026-03-03T00:00:00.000Z');
    expect(budgetWindow('day', w.end).start).toBe(w.end);
  });

  it('is the calendar month holding the time, across a year and a leap February', () => {
    const dec = budgetWindow('month', Date.parse('2026-12-31T12:00:00Z'));
    expect(new Date(dec.start).toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(new Date(dec.end).toISOString()).toBe('2027-01-01T00:00:00.000Z');
    const feb = budgetWindow('month', Date.parse('2028-02-15T00:00:00Z'));
    expect((feb.end - feb.start) / 86_400_000).toBe(29);
  });
});
