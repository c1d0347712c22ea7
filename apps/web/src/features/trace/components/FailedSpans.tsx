import { ActionIcon, Group, Text, Tooltip } from '@mantine/core';
import { IconChevronDown, IconChevronUp } from '@tabler/icons-react';
import { formatCount } from '../../../lib/format';

type Props = { count: number; onStep: (step: 1 | -1) => void };

/** The trace's failed spans, in the header: how many, and the way to each in turn (also the keys E and Shift+E). */
export function FailedSpans({ count, onStep }: Props) {
  return (
    <div>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        Failed
      </Text>
      <Group gap={2} wrap="nowrap">
        <Text
          size="sm"
          fw={500}
          ff="monospace"
          aria-label={`${formatCount(count)} failed ${count === 1 ? 'span' : 'spans'}`}
        >
          {formatCount(count)}
        </Text>
        {count > 0 && (
          <>
            <Tooltip label="Previous failed span (Shift+E)">
              <ActionIcon
                size="xs"
                variant="subtle"
                color="red"
                aria-label="Previous failed span"
                aria-keyshortcuts="Shift+E"
                onClick={() => onStep(-1)}
              >
                <IconChevronUp size={14} />
              </ActionIcon>
            </Tooltip>
            <Tooltip label="Next failed span (E)">
              <ActionIcon
                size="xs"
                variant="subtle"
                color="red"
                aria-label="Next failed span"
                aria-keyshortcuts="E"
                onClick={() => onStep(1)}
              >
                <IconChevronDown size={14} />
              </ActionIcon>
            </Tooltip>
          </>
        )}
      </Group>
    </div>
  );
}
