import { Alert, Anchor, Button, Select, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconDatabasePlus } from '@tabler/icons-react';
import { useState } from 'react';
import { Link } from 'react-router';
import { errorMessage } from '../api/client';
import { useAddTestCases, useDatasets, useSpan } from '../api/queries';
import { caseFromTrace } from '../lib/dataset-case';
import { FormModal } from './DatasetForms';
import { Payload } from './Payload';

/** "Add to dataset" for a trace: its root's inputs and target (or output) become a test case of a dataset. */
export function AddToDataset({ rootId }: { rootId: string }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button size="xs" variant="default" leftSection={<IconDatabasePlus size={14} />} onClick={() => setOpen(true)}>
        Add to dataset
      </Button>
      {open && <AddToDatasetModal rootId={rootId} onClose={() => setOpen(false)} />}
    </>
  );
}

function AddToDatasetModal({ rootId, onClose }: { rootId: string; onClose: () => void }) {
  const datasets = useDatasets();
  const span = useSpan(rootId);
  const [datasetId, setDatasetId] = useState<string | null>(null);
  const add = useAddTestCases();
  const dataset = datasets.data?.find((d) => String(d.id) === datasetId);
  const made = dataset && span.data ? caseFromTrace(span.data, dataset.column_names) : null;
  const submit = () =>
    made?.ok &&
    add.mutate(
      { datasetId: dataset!.id, cases: [{ inputs: made.inputs, target: made.target, tags: [] }] },
      {
        onSuccess: () => {
          notifications.show({ color: 'teal', message: `Added the trace to ${dataset!.name}.` });
          onClose();
        },
      },
    );
  return (
    <FormModal
      title="Add this trace to a dataset"
      onClose={onClose}
      onSubmit={submit}
      submit="Add"
      pending={add.isPending}
      error={add.isError && errorMessage(add.error)}
      disabled={!made?.ok}
    >
      <Select
        label="Dataset"
        placeholder={datasets.data?.length === 0 ? 'No datasets yet' : 'Choose a dataset'}
        data={(datasets.data ?? []).map((d) => ({
          value: String(d.id),
          label: `${d.name} (${d.column_names.join(', ')})`,
        }))}
        value={datasetId}
        onChange={setDatasetId}
        searchable
        data-autofocus
      />
      {datasets.data?.length === 0 && (
        <Text size="sm" c="dimmed">
          <Anchor component={Link} to="/datasets">
            Create a dataset
          </Anchor>{' '}
          with columns named as this trace’s inputs first.
        </Text>
      )}
      {made && !made.ok && (
        <Alert color="yellow" title="The columns do not match">
          This trace’s inputs lack {made.missing.join(', ')}, which {dataset!.name} requires. Choose another dataset.
        </Alert>
      )}
      {made?.ok && (
        <>
          {made.dropped.length > 0 && (
            <Text size="sm" c="dimmed">
              Left out (no such column): {made.dropped.join(', ')}
            </Text>
          )}
          <Text size="sm" fw={500}>
            Inputs
          </Text>
          <Payload label="inputs" value={made.inputs} maxHeight={160} />
          <Text size="sm" fw={500}>
            Target
          </Text>
          <Payload label="target" value={made.target} maxHeight={120} />
        </>
      )}
    </FormModal>
  );
}
