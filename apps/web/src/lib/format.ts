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

/**
 * One precision for a column of costs, so that their digits line up: as many decimals as formatCost gives the
 * smallest non-zero cost (two at least), trailing zeros kept ($0.001740 under $0.001749).
 */
export function costColumnFormatter(costs: readonly number[]): (usd: number | null | undefined) => string {
  const smallest = Math.min(...costs.filter((c) => c > 0));
  const decimals =
    Number.isFinite(smallest) && smallest < 1 ? Math.min(6, 3 - Math.floor(Math.log10(Math.max(smallest, 1e-6)))) : 2;
  return (usd) => (usd == null ? '–' : `$${usd.toFixed(decimals)}`);
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

// A tenth of a percent below 10% (1.5%, not 2%); none at 0, so that an axis reads 0%, 15%, 30%.
export const formatPercent = (fraction: number | null | undefined) =>
  fraction == null ? '–' : `${(fraction * 100).toFixed(fraction < 0.1 && fraction !== 0 ? 1 : 0)}%`;

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export const formatScore = (n: number | null | undefined) =>
  n == null ? '–' : Number.isInteger(n) ? String(n) : n.toFixed(2);

/** A remark's author: a key's label, else the key (`key:<uuid>`), shortened to the last characters of its id. */
export const formatAuthor = (userId: string) => (userId.startsWith('key:') ? `key …${userId.slice(-4)}` : userId);
