import { ActionIcon, CloseButton, Group, Text, TextInput, Tooltip } from '@mantine/core';
import { IconChevronDown, IconChevronUp, IconRefresh, IconSearch } from '@tabler/icons-react';
import { formatCount } from '../../../lib/format';

type Props = {
  value: string;
  onChange: (text: string) => void;
  /** The matches found so far; null without a search. */
  matches: number | null;
  /** The selected span's place among the matches, from 1; null when it is not one. */
  position: number | null;
  /** The server is still searching the contents (the names are searched at once). */
  searching: boolean;
  /** The contents could not be searched: only the names were. */
  failed: boolean;
  onRetry: () => void;
  onStep: (step: 1 | -1) => void;
};

/**
 * The search within a trace: its box, where the selection is among the matches, and the way to the next
 * and the previous one (also Enter and Shift+Enter in the box; Escape clears it).
 */
export function TraceSearchBar({ value, onChange, matches, position, searching, failed, onRetry, onStep }: Props) {
  const status =
    matches == null
      ? ''
      : failed
        ? `${formatCount(matches)} by name only`
        : searching
          ? 'Searching…'
          : matches === 0
            ? 'No match'
            : position != null
              ? `${formatCount(position)} of ${formatCount(matches)}`
              : `${formatCount(matches)} ${matches === 1 ? 'match' : 'matches'}`;
  return (
    <Group gap={4} wrap="nowrap" style={{ flex: 1, minWidth: 0 }}>
      <TextInput
        size="xs"
        aria-label="Search the spans"
        placeholder="Name or content"
        leftSection={<IconSearch size={14} />}
        rightSection={
          value ? <CloseButton size="sm" aria-label="Clear the search" onClick={() => onChange('')} /> : undefined
        }
        value={value}
        onChange={(e) => onChange(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            onStep(e.shiftKey ? -1 : 1);
          } else if (e.key === 'Escape' && value) {
            e.preventDefault();
            onChange('');
          }
        }}
        style={{ flex: '1 1 220px', minWidth: 150, maxWidth: 320 }}
      />
      {matches != null && (
        <>
          <Text size="xs" c={failed ? 'red' : 'dimmed'} role="status" style={{ whiteSpace: 'nowrap' }}>
            {status}
          </Text>
          <Tooltip label="Previous match (Shift+Enter)">
            <ActionIcon
              size="sm"
              variant="subtle"
              color="gray"
              aria-label="Previous match"
              disabled={matches === 0}
              onClick={() => onStep(-1)}
            >
              <IconChevronUp size={14} />
            </ActionIcon>
          </Tooltip>
          <Tooltip label="Next match (Enter)">
            <ActionIcon
              size="sm"
              variant="subtle"
              color="gray"
              aria-label="Next match"
              disabled={matches === 0}
              onClick={() => onStep(1)}
            >
              <IconChevronDown size={14} />
            </ActionIcon>
          </Tooltip>
        </>
      )}
      {failed && (
        <Tooltip label="The contents could not be searched: retry">
          <ActionIcon size="sm" variant="subtle" color="red" aria-label="Retry the content search" onClick={onRetry}>
            <IconRefresh size={14} />
          </ActionIcon>
        </Tooltip>
      )}
    </Group>
  );
}
