import { Badge } from '@mantine/core';
import type { MonitorState } from '@sightline/schemas';

const LOOK: Record<MonitorState, { color: string; label: string }> = {
  ok: { color: 'teal', label: 'OK' },
  firing: { color: 'red', label: 'Firing' },
  no_data: { color: 'gray', label: 'No data' },
};

export function StateBadge({ state }: { state: MonitorState }) {
  const { color, label } = LOOK[state];
  return (
    <Badge color={color} variant={state === 'firing' ? 'filled' : 'light'}>
      {label}
    </Badge>
  );
}
