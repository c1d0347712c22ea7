import type { Budget } from '../api';

/** Whose spend a budget limits, in words. */
export function scopeLabel(scope: Budget['scope']): string {
  switch (scope.kind) {
    case 'organization':
      return 'The organization';
    case 'project':
      return `Project ${scope.project_name}`;
    case 'api_key':
      return `API key ${scope.api_key_id.slice(0, 8)}…`;
    default:
      return `End user ${scope.end_user_identifier}`;
  }
}

/** The share of the limit spent, as the bar shows it: capped at 100. */
export const spentPercent = (b: Pick<Budget, 'spent_usd' | 'limit_usd'>) =>
  Math.min(100, (b.spent_usd / b.limit_usd) * 100);

/** The bar's colour: red at the limit, orange past the budget's highest alert share below it. */
export function barColor(b: Pick<Budget, 'spent_usd' | 'limit_usd' | 'alert_at'>): string {
  const share = b.spent_usd / b.limit_usd;
  if (share >= 1) return 'red';
  return b.alert_at.some((a) => a < 1 && share >= a) ? 'orange' : 'teal';
}

/** "50 %, 80 %, 100 %" from the shares; "50, 80, 100" parsed back (percent), null when one is not a number. */
export const sharesText = (shares: number[]) => shares.map((s) => `${Math.round(s * 1000) / 10}%`).join(', ');
export function parseShares(text: string): number[] | null {
  const parts = text
    .split(/[,\s]+/)
    .map((p) => p.replace('%', '').trim())
    .filter(Boolean);
  const shares = parts.map((p) => Number(p) / 100);
  return shares.some((s) => !Number.isFinite(s)) ? null : shares;
}

/** How a reached share was told, in words: "50% reached · told", "80% reached · retrying (2 attempts)". */
export function alertText(a: Budget['alerts'][number]): string {
  const reached = `${sharesText([a.share])} reached`;
  const { deliveries } = a;
  if (!deliveries.length) return reached;
  if (deliveries.some((d) => d.status === 'failed')) return `${reached} · not delivered`;
  if (deliveries.every((d) => d.status === 'delivered')) return `${reached} · told`;
  const attempts = Math.max(...deliveries.map((d) => d.attempts));
  return attempts
    ? `${reached} · retrying (${attempts} ${attempts === 1 ? 'attempt' : 'attempts'})`
    : `${reached} · sending`;
}
