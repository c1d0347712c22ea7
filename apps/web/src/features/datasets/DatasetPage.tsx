import { Anchor, Breadcrumbs, Button, Checkbox, Group, Menu, Paper, Stack, Table, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconDownload, IconEdit, IconPlus, IconUpload } from '@tabler/icons-react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useRef, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { download, errorMessage } from '../../api/client';
import { useDatasets } from '../../api/datasets';
import { usePermissions } from '../../api/roles';
import type { DatasetSummary, TestCase } from '../../api/types';
import { DeleteButton } from '../../components/ui/DeleteButton';
import { EmptyState, ErrorState, LoadingState } from '../../components/ui/StateViews';
import { formatCount } from '../../lib/format';
import { useDeleteDataset, useDeleteTestCase, useTestCases } from './api';
import { ImportModal, RenameModal, TestCaseModal } from './components/DatasetForms';

const ROW_HEIGHT = 44;

/** One dataset: its test cases in a virtualised table, with adding, editing, deleting, import and export. */
export default function DatasetPage() {
  const id = Number(useParams().datasetId);
  const datasets = useDatasets();
  const dataset = datasets.data?.find((d) => d.id === id);
  if (datasets.isPending) return <LoadingState label="Loading the dataset" />;
  if (datasets.isError) return <ErrorState error={datasets.error} onRetry={() => datasets.refetch()} />;
  if (!dataset)
    return (
      <EmptyState title="No such dataset">
        <Text size="sm" c="dimmed">
          It may have been deleted.{' '}
          <Anchor component={Link} to="/datasets">
            See all datasets
          </Anchor>
          .
        </Text>
      </EmptyState>
    );
  return <Dataset dataset={dataset} />;
}

type Dialog = { kind: 'rename' } | { kind: 'import' } | { kind: 'case'; testCase: TestCase | null } | null;

function Dataset({ dataset }: { dataset: DatasetSummary }) {
  const { canWrite } = usePermissions();
  const [dialog, setDialog] = useState<Dialog>(null);
  const remove = useDeleteDataset(dataset.id);
  const navigate = useNavigate();
  // Off by default: a CSV export is most often opened in a spreadsheet, which would run `=...` cells as formulas.
  const [keepFormulas, setKeepFormulas] = useState(false);
  const exportAs = (format: 'csv' | 'jsonl') =>
    download(
      `/datasets/${dataset.id}/export?format=${format}${format === 'csv' && keepFormulas ? '&formulas=keep' : ''}`,
      `${dataset.name}.${format}`,
    ).catch((err) => notifications.show({ color: 'red', message: errorMessage(err) }));
  return (
    <Stack gap="md" h="calc(100vh - 56px - 2 * var(--mantine-spacing-md))">
      <Group justify="space-between" align="flex-end">
        <div>
          <Breadcrumbs fz="sm">
            <Anchor component={Link} to="/datasets">
              Datasets
            </Anchor>
            <Text size="sm">{dataset.name}</Text>
          </Breadcrumbs>
          <Group gap="xs">
            <Title order={2}>{dataset.name}</Title>
            {canWrite && (
              <Button
                size="compact-sm"
                variant="subtle"
                leftSection={<IconEdit size={14} />}
                onClick={() => setDialog({ kind: 'rename' })}
              >
                Rename
              </Button>
            )}
          </Group>
          <Text size="sm" c="dimmed">
            {formatCount(dataset.test_case_count)} test case{dataset.test_case_count === 1 ? '' : 's'} · columns{' '}
            <Text span ff="monospace" inherit>
              {dataset.column_names.join(', ')}
            </Text>
          </Text>
        </div>
        <Group gap="xs">
          <Menu position="bottom-end">
            <Menu.Target>
              <Button variant="default" leftSection={<IconDownload size={16} />}>
                Export
              </Button>
            </Menu.Target>
            <Menu.Dropdown>
              <Menu.Item onClick={() => exportAs('csv')}>CSV</Menu.Item>
              <Menu.Item onClick={() => exportAs('jsonl')}>JSON Lines</Menu.Item>
              <Menu.Divider />
              <Checkbox
                size="xs"
                p="xs"
                maw={280}
                checked={keepFormulas}
                onChange={(e) => setKeepFormulas(e.currentTarget.checked)}
                label="CSV: keep cells starting with = + - @ as they are (for re-import; unsafe to open in a spreadsheet)"
                description="Otherwise they get a ' in front, which an import keeps."
              />
            </Menu.Dropdown>
          </Menu>
          {canWrite && (
            <>
              <Button
                variant="default"
                leftSection={<IconUpload size={16} />}
                onClick={() => setDialog({ kind: 'import' })}
              >
                Import
              </Button>
              <Button leftSection={<IconPlus size={16} />} onClick={() => setDialog({ kind: 'case', testCase: null })}>
                Add test case
              </Button>
              <DeleteButton
                label={`Delete the dataset ${dataset.name}`}
                question={`Delete the dataset "${dataset.name}" and its ${dataset.test_case_count} test cases? This cannot be undone.`}
                onDelete={() => remove.mutateAsync().then(() => navigate('/datasets'))}
              />
            </>
          )}
        </Group>
      </Group>
      <TestCaseTable dataset={dataset} onEdit={canWrite ? (testCase) => setDialog({ kind: 'case', testCase }) : null} />
      {dialog?.kind === 'rename' && <RenameModal dataset={dataset} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'import' && <ImportModal dataset={dataset} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'case' && (
        <TestCaseModal dataset={dataset} testCase={dialog.testCase} onClose={() => setDialog(null)} />
      )}
    </Stack>
  );
}

function TestCaseTable({ dataset, onEdit }: { dataset: DatasetSummary; onEdit: ((c: TestCase) => void) | null }) {
  const cases = useTestCases(dataset.id);
  const remove = useDeleteTestCase(dataset.id);
  const rows = cases.data?.pages.flatMap((p) => p.results) ?? [];
  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const items = virtual.getVirtualItems();
  const last = items.at(-1)?.index ?? 0;
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = cases;
  // The next page is fetched as the last rows come into view.
  useEffect(() => {
    if (hasNextPage && !isFetchingNextPage && last >= rows.length - 50) void fetchNextPage();
  }, [last, rows.length, hasNextPage, isFetchingNextPage, fetchNextPage]);

  if (cases.isPending) return <LoadingState label="Loading the test cases" />;
  if (cases.isError) return <ErrorState error={cases.error} onRetry={() => cases.refetch()} />;
  if (!rows.length)
    return (
      <Paper withBorder radius="md">
        <EmptyState title="No test cases yet">
          <Text size="sm" c="dimmed">
            Add one, import a CSV or JSON Lines file, or add traces from the traces page.
          </Text>
        </EmptyState>
      </Paper>
    );
  const top = items[0]?.start ?? 0;
  const bottom = virtual.getTotalSize() - (items.at(-1)?.end ?? 0);
  return (
    <Paper withBorder radius="md" style={{ flex: 1, minHeight: 0 }}>
      <div ref={scroller} style={{ height: '100%', overflow: 'auto' }}>
        <Table
          stickyHeader
          verticalSpacing={8}
          aria-label="Test cases"
          aria-rowcount={cases.data.pages[0].total}
          style={{ tableLayout: 'fixed' }}
        >
          <Table.Thead style={{ zIndex: 2 }}>
            <Table.Tr>
              <Table.Th w={70}>Id</Table.Th>
              {dataset.column_names.map((c) => (
                <Table.Th key={c}>{c}</Table.Th>
              ))}
              <Table.Th>Target</Table.Th>
              <Table.Th w={160}>Tags</Table.Th>
              {onEdit && <Table.Th w={170}>Actions</Table.Th>}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {top > 0 && <tr aria-hidden style={{ height: top }} />}
            {items.map((item) => {
              const c = rows[item.index]!;
              return (
                <Table.Tr key={c.id} style={{ height: ROW_HEIGHT }} aria-rowindex={item.index + 2}>
                  <Table.Td ff="monospace" fz="xs" c="dimmed">
                    {c.id}
                  </Table.Td>
                  {dataset.column_names.map((col) => (
                    <Table.Td
                      key={col}
                      style={{ whiteSpace: 'nowrap', overflow: 'hidden', textOverflow: 'ellipsis' }}
                      fz="sm"
                    >
                      {c.inputs[col] ?? ''}
                    </Table.Td>
                  ))}
                  <Table.Td style={{ whiteSpace: 'nowrap', overflow: 'hidden', textOverflow: 'ellipsis' }} fz="sm">
                    {c.target ?? ''}
                  </Table.Td>
                  <Table.Td
                    fz="xs"
                    c="dimmed"
                    style={{ whiteSpace: 'nowrap', overflow: 'hidden', textOverflow: 'ellipsis' }}
                  >
                    {c.tags.join(', ')}
                  </Table.Td>
                  {onEdit && (
                    <Table.Td>
                      <Group gap={0} wrap="nowrap">
                        <Button
                          size="xs"
                          variant="subtle"
                          onClick={() => onEdit(c)}
                          aria-label={`Edit test case ${c.id}`}
                        >
                          Edit
                        </Button>
                        <DeleteButton
                          label={`Delete test case ${c.id}`}
                          question={`Delete test case ${c.id}? This cannot be undone.`}
                          onDelete={() => remove.mutateAsync(c.id)}
                        />
                      </Group>
                    </Table.Td>
                  )}
                </Table.Tr>
              );
            })}
            {bottom > 0 && <tr aria-hidden style={{ height: bottom }} />}
          </Table.Tbody>
        </Table>
      </div>
    </Paper>
  );
}
