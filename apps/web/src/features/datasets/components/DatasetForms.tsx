import { FileInput, List, SegmentedControl, TagsInput, Text, Textarea, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useState, type ReactNode } from 'react';
import { ApiError, errorMessage } from '../../../api/client';
import { useAddTestCases } from '../../../api/datasets';
import type { DatasetSummary, TestCase } from '../../../api/types';
import { FormModal } from '../../../components/ui/FormModal';
import { useImportTestCases, useRenameDataset, useUpdateTestCase } from '../api';

export function RenameModal({ dataset, onClose }: { dataset: DatasetSummary; onClose: () => void }) {
  const [name, setName] = useState(dataset.name);
  const rename = useRenameDataset(dataset.id);
  return (
    <FormModal
      title="Rename the dataset"
      onClose={onClose}
      onSubmit={() => rename.mutate(name.trim(), { onSuccess: onClose })}
      submit="Rename"
      pending={rename.isPending}
      error={rename.isError && errorMessage(rename.error)}
      disabled={!name.trim() || name.trim() === dataset.name}
    >
      <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} data-autofocus />
    </FormModal>
  );
}

/** A 422's per-row problems as a list ("row 3, inputs.question: ..."), or the error's message. */
function importErrors(err: unknown): ReactNode {
  if (!(err instanceof ApiError) || !Array.isArray(err.detail)) return errorMessage(err);
  const problems = err.detail as { loc?: (string | number)[]; msg?: string }[];
  return (
    <>
      Nothing was imported: fix these rows and import the file again.
      <List size="sm" mt={4} mah={200} style={{ overflow: 'auto' }}>
        {problems.map((p, i) => (
          <List.Item key={i}>
            {(p.loc ?? []).filter((l) => l !== 'body' && l !== 'content').join(' ')}: {p.msg}
          </List.Item>
        ))}
      </List>
    </>
  );
}

export function ImportModal({ dataset, onClose }: { dataset: DatasetSummary; onClose: () => void }) {
  const [format, setFormat] = useState<'csv' | 'jsonl'>('csv');
  const [file, setFile] = useState<File | null>(null);
  const importing = useImportTestCases(dataset.id);
  const submit = async () => {
    const content = await file!.text();
    importing.mutate(
      { format, content },
      {
        onSuccess: (r) => {
          notifications.show({ color: 'teal', message: `Imported ${r.imported} test cases into ${dataset.name}.` });
          onClose();
        },
      },
    );
  };
  return (
    <FormModal
      title={`Import test cases into ${dataset.name}`}
      onClose={onClose}
      onSubmit={() => void submit()}
      submit="Import"
      pending={importing.isPending}
      error={importing.isError && importErrors(importing.error)}
      disabled={!file}
    >
      <Text size="sm" c="dimmed">
        A CSV file has a header row naming the input columns ({dataset.column_names.join(', ')}), then target and tags;
        a JSON Lines file has one {'{"inputs": {…}, "target": "…", "tags": […]}'} per line. Either every row is imported
        or none is.
      </Text>
      <SegmentedControl
        aria-label="File format"
        value={format}
        onChange={(v) => setFormat(v as 'csv' | 'jsonl')}
        data={[
          { value: 'csv', label: 'CSV' },
          { value: 'jsonl', label: 'JSON Lines' },
        ]}
      />
      <FileInput
        label="File"
        placeholder="Choose a file"
        value={file}
        onChange={setFile}
        accept={format === 'csv' ? '.csv,text/csv' : '.jsonl,.ndjson,application/x-ndjson'}
        clearable
      />
    </FormModal>
  );
}

export function TestCaseModal({
  dataset,
  testCase,
  onClose,
}: {
  dataset: DatasetSummary;
  testCase: TestCase | null;
  onClose: () => void;
}) {
  const [inputs, setInputs] = useState(() =>
    Object.fromEntries(dataset.column_names.map((c) => [c, testCase?.inputs[c] ?? ''])),
  );
  const [target, setTarget] = useState(testCase?.target ?? '');
  const [tags, setTags] = useState(testCase?.tags ?? []);
  const add = useAddTestCases();
  const update = useUpdateTestCase(dataset.id);
  const mutation = testCase ? update : add;
  const submit = () => {
    const draft = {
      inputs,
      target: target || null,
      tags,
    };
    if (testCase) update.mutate({ id: testCase.id, ...draft }, { onSuccess: onClose });
    else add.mutate({ datasetId: dataset.id, cases: [draft] }, { onSuccess: onClose });
  };
  return (
    <FormModal
      title={testCase ? `Edit test case ${testCase.id}` : `Add a test case to ${dataset.name}`}
      onClose={onClose}
      onSubmit={submit}
      submit={testCase ? 'Save' : 'Add'}
      pending={mutation.isPending}
      error={mutation.isError && errorMessage(mutation.error)}
    >
      {dataset.column_names.map((c, i) => (
        <Textarea
          key={c}
          label={c}
          autosize
          minRows={1}
          maxRows={8}
          value={inputs[c]}
          onChange={(e) => setInputs({ ...inputs, [c]: e.currentTarget.value })}
          data-autofocus={i === 0 || undefined}
        />
      ))}
      <Textarea
        label="Target"
        autosize
        minRows={1}
        maxRows={8}
        value={target}
        onChange={(e) => setTarget(e.currentTarget.value)}
      />
      <TagsInput label="Tags" value={tags} onChange={setTags} />
    </FormModal>
  );
}
