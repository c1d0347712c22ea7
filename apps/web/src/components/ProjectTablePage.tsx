import { Button, Paper, Stack, Table, Text, VisuallyHidden } from '@mantine/core';
import { IconPlus } from '@tabler/icons-react';
import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ProjectHeader, type Section } from './ProjectHeader';
import { EmptyState, ErrorState, LoadingState } from './ui/StateViews';

/**
 * A project's page that lists things it configures (eval rules, annotation queues) in a table: loading,
 * error with retry, an empty state that says what they are and offers to create one, and the table. The
 * header offers "Create" too, except over the empty state, which has its own.
 */
export function ProjectTablePage<T>({
  projectUuid,
  section,
  title,
  noun,
  list,
  onCreate,
  empty,
  label,
  columns,
  minWidth,
  row,
  actions = onCreate !== null,
  children,
}: {
  projectUuid: string;
  section: Section;
  title: string;
  /** What one of them is called: "rule" makes "Create rule", "Loading the rules", "No rules yet". */
  noun: string;
  list: UseQueryResult<T[]>;
  /** Null for a caller who cannot write: nothing to create. */
  onCreate: (() => void) | null;
  /** What they are, for the empty state. */
  empty: ReactNode;
  /** The table's accessible name. */
  label: string;
  columns: string[];
  minWidth: number;
  row: (item: T) => ReactNode;
  /** Whether rows end with a cell of actions (by default, for a caller who can write). */
  actions?: boolean;
  /** The page's dialogs. */
  children?: ReactNode;
}) {
  const create = onCreate && (
    <Button leftSection={<IconPlus size={16} />} onClick={onCreate}>
      Create {noun}
    </Button>
  );
  return (
    <Stack gap="md">
      <ProjectHeader
        projectUuid={projectUuid}
        section={section}
        title={title}
        right={list.data?.length !== 0 && create}
      />
      <Paper withBorder radius="md">
        {list.isPending ? (
          <LoadingState label={`Loading the ${noun}s`} />
        ) : list.isError ? (
          <Stack p="md">
            <ErrorState error={list.error} title={`Could not load the ${noun}s`} onRetry={() => list.refetch()} />
          </Stack>
        ) : list.data.length === 0 ? (
          <EmptyState title={`No ${noun}s yet`}>
            <Text size="sm" c="dimmed">
              {empty}
            </Text>
            {create}
          </EmptyState>
        ) : (
          <Table.ScrollContainer minWidth={minWidth}>
            {/* On a narrow screen the table scrolls in its box; the cell of actions stays in view at its right. */}
            <Table
              verticalSpacing="sm"
              horizontalSpacing="md"
              aria-label={label}
              className={actions ? 'sticky-actions' : undefined}
            >
              <Table.Thead>
                <Table.Tr>
                  {columns.map((c) => (
                    <Table.Th key={c}>{c}</Table.Th>
                  ))}
                  {actions && (
                    <Table.Th>
                      <VisuallyHidden>Actions</VisuallyHidden>
                    </Table.Th>
                  )}
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>{list.data.map(row)}</Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </Paper>
      {children}
    </Stack>
  );
}
