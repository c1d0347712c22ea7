import { Badge, Button, Code, Group, SegmentedControl, SimpleGrid, Stack, Table, Text } from '@mantine/core';
import { useState } from 'react';
import type { AuditEntry } from '../../../api/types';
import { Payload } from '../../../components/ui/Payload';
import { fieldChanges, valueText } from '../lib/changes';

/** What an entry changed: its target's fields before and after (changed ones only, unless asked), or both as JSON. */
export function EntryChanges({ entry }: { entry: AuditEntry }) {
  const [view, setView] = useState<'fields' | 'json'>('fields');
  const [all, setAll] = useState(false);
  const fields = fieldChanges(entry.before, entry.after);
  const unchanged = fields.filter((f) => !f.changed).length;
  const shown = all ? fields : fields.filter((f) => f.changed);
  const target = entry.target.name ?? entry.target.id;
  return (
    <Stack gap="xs" py={4}>
      <Group justify="space-between">
        <SegmentedControl
          size="xs"
          value={view}
          onChange={(v) => setView(v as 'fields' | 'json')}
          data={[
            { value: 'fields', label: 'Changes' },
            { value: 'json', label: 'JSON' },
          ]}
          aria-label={`How to show the change to ${target}`}
        />
        {view === 'fields' && unchanged > 0 && (
          <Button size="compact-xs" variant="subtle" onClick={() => setAll(!all)}>
            {all ? 'Hide unchanged fields' : `Show ${unchanged} unchanged field${unchanged === 1 ? '' : 's'}`}
          </Button>
        )}
      </Group>
      {view === 'json' ? (
        <SimpleGrid cols={2}>
          <div>
            <Text size="xs" fw={600} mb={4}>
              Before
            </Text>
            <Payload value={entry.before} label="before" maxHeight={320} />
          </div>
          <div>
            <Text size="xs" fw={600} mb={4}>
              After
            </Text>
            <Payload value={entry.after} label="after" maxHeight={320} />
          </div>
        </SimpleGrid>
      ) : shown.length === 0 ? (
        <Text size="sm" c="dimmed">
          No field changed.
        </Text>
      ) : (
        <Table layout="fixed" verticalSpacing={4} withTableBorder aria-label={`Changes to ${target}`}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th w="20%">Field</Table.Th>
              <Table.Th>Before</Table.Th>
              <Table.Th>After</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {shown.map((f) => (
              <Table.Tr key={f.field}>
                <Table.Td ff="monospace" fz="xs" fw={f.changed ? 600 : undefined} style={{ wordBreak: 'break-word' }}>
                  {f.field || 'value'}
                </Table.Td>
                <Table.Td>
                  <Value value={f.before} />
                </Table.Td>
                <Table.Td>
                  <Value value={f.after} />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}

/** A recorded value: secrets only as whether they are set or changed (the log never holds them). */
function Value({ value }: { value: unknown }) {
  if (value === undefined)
    return (
      <Text size="xs" c="dimmed">
        –
      </Text>
    );
  if (value === '<secret>')
    return (
      <Badge size="sm" variant="light" color="gray">
        secret, set
      </Badge>
    );
  if (value === '<changed>')
    return (
      <Badge size="sm" variant="light" color="yellow">
        secret, changed
      </Badge>
    );
  const text = valueText(value);
  return (
    <Code block fz="xs" p={4} style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
      {text}
    </Code>
  );
}
