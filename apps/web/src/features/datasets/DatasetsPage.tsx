import { Anchor, Button, Group, Stack, Table, TagsInput, Text, TextInput, Title } from '@mantine/core';
import { IconPlus } from '@tabler/icons-react';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { errorMessage } from '../../api/client';
import { useDatasets } from '../../api/datasets';
import { usePermissions } from '../../api/roles';
import { FormModal } from '../../components/ui/FormModal';
import { EmptyState, QueryPanel } from '../../components/ui/StateViews';
import { Timestamp } from '../../components/ui/Timestamp';
import { formatCount } from '../../lib/format';
import { useCreateDataset } from './api';

/** The organization's datasets: the test cases experiments run over. */
export default function DatasetsPage() {
  const datasets = useDatasets();
  const { canWrite } = usePermissions();
  const [creating, setCreating] = useState(false);
  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={2}>Datasets</Title>
        {canWrite && (
          <Button leftSection={<IconPlus size={16} />} onClick={() => setCreating(true)}>
            New dataset
          </Button>
        )}
      </Group>
      <QueryPanel
        query={datasets}
        loading="Loading the datasets"
        empty={
          <EmptyState title="No datasets yet">
            <Text size="sm" c="dimmed">
              A dataset holds test cases (inputs and a target) that an experiment runs over. Create one here, from
              traces (“Add to dataset” on a trace), or with the clients’ dataset functions.
            </Text>
          </EmptyState>
        }
      >
        {(results) => (
          <Table highlightOnHover verticalSpacing="sm" horizontalSpacing="md" aria-label="Datasets">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Columns</Table.Th>
                <Table.Th ta="right">Test cases</Table.Th>
                <Table.Th>Last updated</Table.Th>
                <Table.Th>Created</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {results.map((d) => (
                <Table.Tr key={d.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/datasets/${d.id}`} fw={500}>
                      {d.name}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" ff="monospace" c="dimmed" lineClamp={1}>
                      {d.column_names.join(', ')}
                    </Text>
                  </Table.Td>
                  <Table.Td ta="right" ff="monospace">
                    {formatCount(d.test_case_count)}
                  </Table.Td>
                  <Table.Td>
                    <Timestamp value={d.last_updated_at} size="sm" />
                  </Table.Td>
                  <Table.Td>
                    <Timestamp value={d.created_at} size="sm" />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </QueryPanel>
      {creating && <CreateDataset onClose={() => setCreating(false)} />}
    </Stack>
  );
}

function CreateDataset({ onClose }: { onClose: () => void }) {
  const [name, setName] = useState('');
  const [columns, setColumns] = useState<string[]>([]);
  const create = useCreateDataset();
  const navigate = useNavigate();
  return (
    <FormModal
      title="New dataset"
      onClose={onClose}
      onSubmit={() =>
        create.mutate({ name: name.trim(), column_names: columns }, { onSuccess: (d) => navigate(`/datasets/${d.id}`) })
      }
      submit="Create"
      pending={create.isPending}
      error={create.isError && errorMessage(create.error)}
      disabled={!name.trim() || !columns.length}
    >
      <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} data-autofocus />
      <TagsInput
        label="Input columns"
        description="The keys of each test case's inputs (press Enter after each)"
        value={columns}
        onChange={setColumns}
        placeholder="question, context"
      />
    </FormModal>
  );
}
