// Timestamps travel as canonical ISO strings with microseconds ("2026-01-02T03:04:05.678901Z") so that
// PostgreSQL keeps the full precision clients send (Python sends microseconds; JS Date keeps only ms).

const PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

export type ParsedTimestamp = { iso: string; micros: number };

export function parseTimestamp(input: string): ParsedTimestamp | null {
  const m = PATTERN.exec(input.trim());
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone = 'Z'] = m;
  const year = +y,
    month = +mo,
    day = +d,
    hour = +h,
    minute = +mi,
    second = +s;
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const dayMs = Date.UTC(year, month - 1, day);
  const check = new Date(dayMs);
  if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) return null;

  let offsetMinutes = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const oh = +digits.slice(0, 2),
      om = digits.length > 2 ? +digits.slice(2, 4) : 0;
    if (oh > 23 || om > 59) return null;
    offsetMinutes = sign * (oh * 60 + om);
  }
  // Truncate below a microsecond: PostgreSQL's precision.
  const micro = Number((frac + '000000').slice(0, 6));
  const micros = (dayMs + ((hour * 60 + minute - offsetMinutes) * 60 + second) * 1000) * 1000 + micro;
  const utc = new Date(Math.floor(micros / 1000));
  if (utc.getUTCFullYear() < 1 || utc.getUTCFullYear() > 9999) return null;
  const iso = `${utc.toISOString().slice(0, 19)}.${String(((micros % 1_000_000) + 1_000_000) % 1_000_000).padStart(6, '0')}Z`;
  return { iso, micros };
}

/** The wire format of trace-log and experiment timestamps: `YYYY-MM-DD HH:MM:SS` in UTC. */
export function formatTimestamp(value: Date): string;
export function formatTimestamp(value: Date | string | null | undefined): string | null;
export function formatTimestamp(value: Date | string | null | undefined): string | null {
  if (value == null) return null;
  const date = typeof value === 'string' ? parseToDate(value) : value;
  return date ? date.toISOString().slice(0, 19).replace('T', ' ') : null;
}

function parseToDate(value: string): Date | null {
  const parsed = parseTimestamp(value);
  return parsed ? new Date(Math.floor(parsed.micros / 1000)) : null;
}

/** Seconds between two timestamps, at microsecond precision. */
export function secondsBetween(start: string, end: string): number | null {
  const a = parseTimestamp(start),
    b = parseTimestamp(end);
  return a && b ? (b.micros - a.micros) / 1e6 : null;
}
