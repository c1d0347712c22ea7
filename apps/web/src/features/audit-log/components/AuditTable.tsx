import { ActionIcon, Badge, Button, Group, Paper, Table, Text, Tooltip, VisuallyHidden } from '@mantine/core';
import { IconChevronDown, IconChevronRight, IconFilter } from '@tabler/icons-react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useRef, useState } from 'react';
import type { AuditEntry } from '../../../api/types';
import { Timestamp } from '../../../components/ui/Timestamp';
import { actionOf, actorId, actorName, KIND_LABELS } from '../lib/labels';
import { EntryChanges } from './EntryChanges';

const ROW_HEIGHT = 49;
const COLUMNS = 5;

/**
 * The entries, newest first, in a virtualised table whose rows open to show what changed (each entry its own
 * body, measured as it opens); the next page is asked for as the last rows come into view.
 */
export function AuditTable({
  entries,
  more,
  onMore,
  onActor,
}: {
  entries: AuditEntry[];
  /** Older entries exist (`loading`: being read). */
  more: 'yes' | 'loading' | 'no';
  onMore: () => void;
  /** Shows only this key's changes; null once the log shows only one key's. */
  onActor: ((keyId: string) => void) | null;
}) {
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const toggle = (id: string) =>
    setOpen((was) => {
      const next = new Set(was);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({
    count: entries.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    getItemKey: (i) => entries[i]!.id,
    overscan: 10,
  });
  const items = virtual.getVirtualItems();
  const last = items.at(-1)?.index ?? 0;
  useEffect(() => {
    if (more === 'yes' && last >= entries.length - 20) onMore();
  }, [more, last, entries.length, onMore]);

  const top = items[0]?.start ?? 0;
  const bottom = virtual.getTotalSize() - (items.at(-1)?.end ?? 0);
  return (
    <Paper withBorder radius="md" style={{ flex: 1, minHeight: 0 }}>
      <div ref={scroller} style={{ height: '100%', overflow: 'auto' }}>
        <Table stickyHeader verticalSpacing={8} aria-label="Audit log" style={{ tableLayout: 'fixed' }}>
          <Table.Thead style={{ zIndex: 2 }}>
            <Table.Tr>
              <Table.Th w={190}>Time</Table.Th>
              <Table.Th w="24%">Actor</Table.Th>
              <Table.Th w={200}>Action</Table.Th>
              <Table.Th>Target</Table.Th>
              <Table.Th w={150}>
                <VisuallyHidden>Details</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          {top > 0 && (
            <tbody aria-hidden>
              <tr style={{ height: top }} />
            </tbody>
          )}
          {items.map((item) => {
            const entry = entries[item.index]!;
            const expanded = open.has(entry.id);
            const action = actionOf(entry.action);
            const detailsId = `audit-entry-${entry.id}`;
            const actor = actorName(entry.actor);
            return (
              <Table.Tbody key={entry.id} ref={virtual.measureElement} data-index={item.index}>
                <Table.Tr>
                  <Table.Td>
                    <Timestamp value={entry.at} size="sm" />
                  </Table.Td>
                  <Table.Td>
                    <Group gap={6} wrap="nowrap">
                      <Text size="sm" truncate title={actor}>
                        {actor}
                      </Text>
                      <Badge size="xs" variant="outline" color="gray" style={{ flexShrink: 0 }}>
                        {entry.actor.role}
                      </Badge>
                      {onActor && (
                        <Tooltip label={`Only changes by ${actor}`} withArrow openDelay={300}>
                          <ActionIcon
                            size="sm"
                            variant="subtle"
                            color="gray"
                            onClick={() => onActor(actorId(entry.actor))}
                            aria-label={`Only changes by ${actor}`}
                          >
                            <IconFilter size={14} />
                          </ActionIcon>
                        </Tooltip>
                      )}
                    </Group>
                  </Table.Td>
                  <Table.Td>
                    <Badge variant="light" color={action.color} style={{ textTransform: 'none' }}>
                      {action.label}
                    </Badge>
                  </Table.Td>
                  <Table.Td>
                    <Text size="xs" c="dimmed">
                      {KIND_LABELS[entry.target.kind] ?? entry.target.kind}
                    </Text>
                    <Text size="sm" fw={500} truncate title={entry.target.name ?? entry.target.id}>
                      {entry.target.name ?? entry.target.id}
                    </Text>
                  </Table.Td>
                  <Table.Td ta="right">
                    <Button
                      size="compact-sm"
                      variant="subtle"
                      rightSection={expanded ? <IconChevronDown size={14} /> : <IconChevronRight size={14} />}
                      aria-expanded={expanded}
                      aria-controls={expanded ? detailsId : undefined}
                      aria-label={`${expanded ? 'Hide details' : 'Details'} of ${actor} ${action.label} ${
                        entry.target.name ?? entry.target.id
                      }`}
                      onClick={() => toggle(entry.id)}
                    >
                      {expanded ? 'Hide details' : 'Details'}
                    </Button>
                  </Table.Td>
                </Table.Tr>
                {expanded && (
                  <Table.Tr id={detailsId}>
                    <Table.Td colSpan={COLUMNS}>
                      <EntryChanges entry={entry} />
                    </Table.Td>
                  </Table.Tr>
                )}
              </Table.Tbody>
            );
          })}
          {bottom > 0 && (
            <tbody aria-hidden>
              <tr style={{ height: bottom }} />
            </tbody>
          )}
        </Table>
        <Text size="xs" c="dimmed" ta="center" py="sm" role="status">
          {more === 'loading'
            ? 'Loading older entries…'
            : more === 'no'
              ? `${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}, back to the oldest kept.`
              : `${entries.length} entries so far; scroll for older ones.`}
        </Text>
      </div>
    </Paper>
  );
}
