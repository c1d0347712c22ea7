import { Badge, Button, Group, Text, Tooltip } from '@mantine/core';
import { IconPlayerPauseFilled, IconPlayerPlayFilled } from '@tabler/icons-react';
import type { LiveStatus } from '../../../api/live';

const LABEL: Record<LiveStatus, [string, string, string]> = {
  live: ['Live', 'teal', 'New traces appear as they are written'],
  connecting: ['Connecting…', 'yellow', 'Opening the live stream'],
  reconnecting: ['Reconnecting…', 'yellow', 'The live stream dropped; the browser is reconnecting'],
  off: ['Offline', 'gray', 'The live stream is closed'],
  ended: ['Stopped', 'red', 'The server ended the live stream; reload the page to try again'],
};

export function LiveControl({
  status,
  ended,
  paused,
  onToggle,
}: {
  status: LiveStatus;
  /** The server's reason for ending the stream. */
  ended?: string | null;
  paused: boolean;
  onToggle: () => void;
}) {
  const [label, color, help] = paused
    ? ['Paused', 'gray', 'New traces wait behind a bar until you resume']
    : LABEL[status];
  return (
    <Group gap={6} wrap="nowrap">
      {status === 'ended' && ended && (
        <Text size="sm" c="red" role="alert" maw={360} lineClamp={2}>
          Live tail stopped: {ended}
        </Text>
      )}
      <Tooltip label={help} withArrow>
        <Badge variant="dot" color={color} size="lg" tt="none" fw={500} role="status" aria-live="polite">
          {label}
        </Badge>
      </Tooltip>
      <Button
        variant="default"
        onClick={onToggle}
        aria-pressed={paused}
        leftSection={paused ? <IconPlayerPlayFilled size={14} /> : <IconPlayerPauseFilled size={14} />}
      >
        {paused ? 'Resume' : 'Pause'}
      </Button>
    </Group>
  );
}
