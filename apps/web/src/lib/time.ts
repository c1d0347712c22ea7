// The API's timestamps are UTC, written either as ISO 8601 or as `YYYY-MM-DD HH:MM:SS` (no zone, still UTC).

export function parseApiTime(value: string | null | undefined): Date | null {
  if (!value) return null;
  let text = value.trim().replace(/^(\d{4}-\d{2}-\d{2}) /, '$1T');
  if (!/(z|[+-]\d{2}:?\d{2})$/i.test(text)) text += 'Z';
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? null : date;
}

export const apiTimeMs = (value: string | null | undefined) => parseApiTime(value)?.getTime() ?? null;

const local = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});
const localTime = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

/** In the browser's zone; today's times without the date. */
export function formatLocal(date: Date, now = new Date()): string {
  return date.toDateString() === now.toDateString() ? localTime.format(date) : local.format(date);
}

export const formatUtc = (date: Date) => `${date.toISOString().replace('T', ' ').replace('Z', '')} UTC`;

export function formatRelative(date: Date, now = Date.now()): string {
  const s = Math.round((now - date.getTime()) / 1000);
  if (s < 60) return s <= 1 ? 'just now' : `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}
