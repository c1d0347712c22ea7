export function formatLatency(seconds: number | null | undefined): string {
  if (seconds == null) return '–';
  if (seconds === 0) return '0';
  if (seconds < 0.001) return `${(seconds * 1e6).toFixed(0)} µs`;
  if (seconds < 1) return `${(seconds * 1000).toFixed(0)} ms`;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 2 : 1)} s`;
  const m = Math.floor(seconds / 60);
  return `${m} min ${Math.round(seconds - m * 60)} s`;
}

export function formatCost(usd: number | null | undefined): string {
  if (usd == null) return '–';
  if (usd === 0) return '$0';
  if (usd < 0.000001) return '<$0.000001';
  // Four significant digits at most: a cheap call reads $0.000042, not $4.2e-5.
  if (usd < 1)
    return `$${usd
      .toFixed(Math.min(6, 3 - Math.floor(Math.log10(usd))))
      .replace(/0+$/, '')
      .replace(/\.$/, '')}`;
  return `$${usd.toFixed(2)}`;
}

const integer = new Intl.NumberFormat();
export const formatCount = (n: number | null | undefined) => (n == null ? '–' : integer.format(n));

export function formatTokens(
  input: number | null | undefined,
  output: number | null | undefined,
  total: number | null | undefined,
): string {
  const sum = total ?? (input == null && output == null ? null : (input ?? 0) + (output ?? 0));
  return formatCount(sum);
}

export const formatPercent = (fraction: number | null | undefined) =>
  fraction == null ? '–' : `${(fraction * 100).toFixed(fraction < 0.1 ? 1 : 0)}%`;

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export const formatScore = (n: number | null | undefined) =>
  n == null ? '–' : Number.isInteger(n) ? String(n) : n.toFixed(2);

/** A remark's author: a key's label, else the key (`key:<uuid>`), shortened to the last characters of its id. */
export const formatAuthor = (userId: string) => (userId.startsWith('key:') ? `key …${userId.slice(-4)}` : userId);
