import { Text } from '@mantine/core';
import type { MonitorMetric } from '@sightline/schemas';
import { Line, LineChart, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { parseApiTime } from '../../../lib/time';
import type { MonitorPoint } from '../api';
import { formatMetric } from '../lib/monitors';

const hour = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const tick = (iso: string) => hour.format(parseApiTime(iso) ?? new Date(iso));

/**
 * The metric over the last 24 hours (the window ending at each hour) with the threshold drawn: a
 * sparkline in a monitor's row, a chart with axes in the form's preview. Hours with fewer traces than the
 * monitor needs are gaps. Its text alternative says the last value and the range.
 */
export function MetricChart({
  metric,
  series,
  threshold,
  minSamples,
  compact = false,
  label,
}: {
  metric: MonitorMetric;
  series: MonitorPoint[];
  threshold: number | null;
  minSamples: number;
  compact?: boolean;
  label: string;
}) {
  const data = series.map((p) => ({ at: p.at, value: p.samples >= minSamples ? p.value : null }));
  const values = data.flatMap((d) => (d.value === null ? [] : [d.value]));
  if (!values.length)
    return (
      <Text size="xs" c="dimmed">
        {compact ? 'No data in 24 h' : `No hour of the last 24 had ${minSamples} traces or more.`}
      </Text>
    );
  const summary = `${label}: last ${formatMetric(metric, values.at(-1)!)}, from ${formatMetric(metric, Math.min(...values))} to ${formatMetric(metric, Math.max(...values))} over 24 hours${threshold === null ? '' : `, threshold ${formatMetric(metric, threshold)}`}`;
  return (
    <div role="img" aria-label={summary} style={{ width: '100%', height: compact ? 36 : 180 }}>
      <ResponsiveContainer width="100%" height="100%">
        <LineChart data={data} margin={compact ? { top: 4, bottom: 4, left: 2, right: 2 } : { top: 8, right: 12 }}>
          {!compact && <XAxis dataKey="at" tickFormatter={tick} fontSize={11} minTickGap={24} />}
          <YAxis
            hide={compact}
            fontSize={11}
            width={64}
            tickFormatter={(v: number) => formatMetric(metric, v)}
            // The threshold stays in view even when the metric is far from it.
            domain={[
              (min: number) => Math.min(min, threshold ?? min),
              (max: number) => Math.max(max, threshold ?? max),
            ]}
          />
          {!compact && (
            <Tooltip labelFormatter={(l) => tick(String(l))} formatter={(v) => formatMetric(metric, Number(v))} />
          )}
          {threshold !== null && (
            <ReferenceLine y={threshold} stroke="#fa5252" strokeDasharray="4 3" ifOverflow="extendDomain" />
          )}
          <Line
            type="monotone"
            dataKey="value"
            name="Value"
            stroke="#4c6ef5"
            strokeWidth={compact ? 1.5 : 2}
            // A dot at each hour: an hour between two without data is a point, not a line.
            dot={{ r: compact ? 1.5 : 2 }}
            isAnimationActive={false}
          />
        </LineChart>
      </ResponsiveContainer>
    </div>
  );
}
