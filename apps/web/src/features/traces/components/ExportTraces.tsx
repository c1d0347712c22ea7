import { Button, Group, Modal, Progress, Radio, SegmentedControl, Stack, Text } from '@mantine/core';
import { IconDownload } from '@tabler/icons-react';
import { useState } from 'react';
import type { TraceExportRequest, TraceRowsRequest } from '../../../api/types';
import { formatBytes, formatCount } from '../../../lib/format';
import { useTraceExport } from '../lib/use-trace-export';

type Format = TraceExportRequest['format'];
type Shape = NonNullable<TraceExportRequest['shape']>;

const FORMATS: { value: Format; label: string }[] = [
  { value: 'jsonl', label: 'JSONL' },
  { value: 'csv', label: 'CSV' },
  { value: 'parquet', label: 'Parquet' },
];

/** `n` things, in words: 1 trace, 2 traces. */
const counted = (n: number, noun: string) => `${formatCount(n)} ${noun}${n === 1 ? '' : 's'}`;

type Props = {
  /** The table's request: the export takes its search, filters, status, time range and order. */
  request: TraceRowsRequest;
  /** How many traces the view holds, when known. */
  matching: number | null;
};

/** "Export" on the traces page: the traces the view shows, as a file, with its progress and a way to stop it. */
export function ExportTraces(props: Props) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button size="xs" variant="default" leftSection={<IconDownload size={14} />} onClick={() => setOpen(true)}>
        Export
      </Button>
      {open && <ExportModal {...props} onClose={() => setOpen(false)} />}
    </>
  );
}

function ExportModal({ request, matching, onClose }: Props & { onClose: () => void }) {
  const [format, setFormat] = useState<Format>('jsonl');
  const [shape, setShape] = useState<Shape>('traces');
  const { state, progress, start, cancel, reset } = useTraceExport();
  const running = state.step === 'running';
  const { page: _page, page_size: _size, content: _content, metadata_keys: _keys, count: _count, ...view } = request;
  const close = () => {
    cancel();
    onClose();
  };

  return (
    <Modal opened onClose={close} title="Export traces" size="lg">
      <Stack>
        <Text size="sm">
          {matching === null ? 'The traces' : matching === 1 ? 'The trace' : `The ${formatCount(matching)} traces`} this
          view shows, with its search, filters, status and time range, in its order.
        </Text>
        <SegmentedControl
          aria-label="Format"
          data={FORMATS}
          value={format}
          onChange={(v) => setFormat(v as Format)}
          disabled={running}
        />
        <Radio.Group label="One row or line per" value={shape} onChange={(v) => setShape(v as Shape)}>
          <Group mt={4}>
            <Radio value="traces" label="trace, its spans nested" disabled={running} />
            <Radio value="spans" label="span, with its trace and parent ids" disabled={running} />
          </Group>
        </Radio.Group>

        {state.step !== 'idle' && (
          <Stack gap={4} role="status" aria-live="polite">
            {running && (
              <Progress
                aria-label="Traces exported"
                value={matching && progress ? Math.min(100, (100 * progress.traces) / matching) : 100}
                animated={!matching || !progress}
              />
            )}
            <Text size="sm">
              {state.step === 'running' &&
                `Exporting: ${counted(progress?.spans ?? 0, 'span')} of ${counted(progress?.traces ?? 0, 'trace')} so far, ${formatBytes(state.bytes)} received`}
              {state.step === 'done' &&
                `Saved ${state.filename}: ${formatBytes(state.bytes)}${progress?.state === 'done' ? `, ${counted(progress.traces, 'trace')} and ${counted(progress.spans, 'span')}` : ''}.`}
              {state.step === 'cancelled' && 'Export cancelled: nothing was saved.'}
            </Text>
            {state.step === 'failed' && (
              <Text size="sm" c="red" role="alert">
                The export failed and nothing was saved: {state.error}
              </Text>
            )}
          </Stack>
        )}

        <Group justify="flex-end">
          {running ? (
            <Button color="red" variant="light" onClick={cancel}>
              Cancel export
            </Button>
          ) : (
            <>
              <Button variant="default" onClick={close}>
                {state.step === 'idle' ? 'Cancel' : 'Done'}
              </Button>
              <Button
                leftSection={<IconDownload size={16} />}
                onClick={() => {
                  reset();
                  void start({ ...view, format, shape });
                }}
              >
                {state.step === 'idle' ? 'Export' : 'Export again'}
              </Button>
            </>
          )}
        </Group>
      </Stack>
    </Modal>
  );
}
