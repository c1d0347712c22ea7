import { Group, Kbd, Text } from '@mantine/core';
import type { ReactNode } from 'react';

const KEYS: { keys: ReactNode; what: string }[] = [
  {
    keys: (
      <>
        <Kbd>j</Kbd> <Kbd>k</Kbd>
      </>
    ),
    what: 'next / previous span',
  },
  { keys: <Kbd>c</Kbd>, what: 'next criterion' },
  {
    keys: (
      <>
        <Kbd>1</Kbd>–<Kbd>9</Kbd>
      </>
    ),
    what: 'choose an option, or set that score',
  },
  { keys: <Kbd>Enter</Kbd>, what: 'complete and take the next' },
  { keys: <Kbd>s</Kbd>, what: 'skip' },
  { keys: <Kbd>Esc</Kbd>, what: 'leave a field' },
];

/** The review page's keys, in one small line; none of them acts while a field is being written in. */
export function KeyHelp() {
  return (
    <Group gap="md" role="note" aria-label="Keyboard shortcuts">
      {KEYS.map(({ keys, what }) => (
        <Text key={what} size="xs" c="dimmed">
          {keys} {what}
        </Text>
      ))}
    </Group>
  );
}
