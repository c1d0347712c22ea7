import { Alert, Anchor, Button, Select, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconDatabasePlus } from '@tabler/icons-react';
import { useState } from 'react';
import { Link } from 'react-router';
import { errorMessage } from '../api/client';
import { useAddTestCases, useDatasets } from '../api/datasets';
import { useSpans } from '../api/traces';
import { caseFromTrace } from '../lib/dataset-case';
import { FormModal } from './ui/FormModal';
import { Payload } from './ui/Payload';
import { LoadingState } from './ui/StateViews';

/**
 * "Add to dataset" for one trace (the trace view) or a selection (the traces table): each root's inputs
 * and target (or output) become a test case of the chosen dataset.
 */
export function AddToDataset({ rootIds, onAdded }: { rootIds: string[]; onAdded?: () => void }) {
  const [open, setOpen] = useState(false);
  const many = rootIds.length > 1;
  return (
    <>
      <Button size="xs" variant="default" leftSection={<IconDatabasePlus size={14} />} onClick={() => setOpen(true)}>
        {many ? `Add ${rootIds.length} to dataset` : 'Add to dataset'}
      </Button>
      {open && (
        <AddToDatasetModal
          rootIds={rootIds}
          onClose={() => setOpen(false)}
          onAdded={() => {
            setOpen(false);
            onAdded?.();
          }}
        />
      )}
    </>
  );
}

function AddToDatasetModal({
  rootIds,
  onClose,
  onAdded,
}: {
  rootIds: string[];
  onClose: () => void;
  onAdded: () => void;
}) {
  const datasets = useDatasets();
  const spans = useSpans(rootIds);
  const [datasetId, setDatasetId] = useState<string | null>(null);
  const add = useAddTestCases();
  const dataset = datasets.data?.find((d) => String(d.id) === datasetId);
  const loaded = spans.every((s) => s.data);
  const made = dataset && loaded ? spans.map((s) => caseFromTrace(s.data!, dataset.column_names)) : null;
  const fit = made?.flatMap((m) => (m.ok ? [m] : [])) ?? [];
  const missing = [...new Set(made?.flatMap((m) => (m.ok ? [] : m.missing)))];
  const noun = (n: number) => (n === 1 ? 'the trace' : `${n} traces`);
  const submit = () =>
    add.mutate(
      { datasetId: dataset!.id, cases: fit.map((m) => ({ inputs: m.inputs, target: m.target, tags: [] })) },
      {
        onSuccess: () => {
          notifications.show({ color: 'teal', message: `Added ${noun(fit.length)} to ${dataset!.name}.` });
          onAdded();
        },
      },
    );
  return (
    <FormModal
      title={rootIds.length > 1 ? `Add ${rootIds.length} traces to a dataset` : 'Add this trace to a dataset'}
      onClose={onClose}
      onSubmit={submit}
      submit="Add"
      pending={add.isPending}
      error={add.isError && errorMessage(add.error)}
      disabled={!fit.length || !!missing.length}
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
          with columns named as the traces’ inputs first.
        </Text>
      )}
      {dataset && !loaded && <LoadingState label="Reading the traces" />}
      {missing.length > 0 && (
        <Alert color="yellow" title="The columns do not match">
          {made!.length - fit.length} of {noun(made!.length)} lack {missing.join(', ')} in their inputs, which{' '}
          {dataset!.name} requires. Choose another dataset{rootIds.length > 1 ? ' or select other traces' : ''}.
        </Alert>
      )}
      {fit.length > 0 && !missing.length && (
        <>
          {fit[0].dropped.length > 0 && (
            <Text size="sm" c="dimmed">
              Left out (no such column): {fit[0].dropped.join(', ')}
            </Text>
          )}
          {fit.length > 1 && <Text size="sm">{fit.length} test cases, the first of them:</Text>}
          <Text size="sm" fw={500}>
            Inputs
          </Text>
          <Payload label="inputs" value={fit[0].inputs} maxHeight={160} />
          <Text size="sm" fw={500}>
            Target
          </Text>
          <Payload label="target" value={fit[0].target} maxHeight={120} />
        </>
      )}
    </FormModal>
  );
}
