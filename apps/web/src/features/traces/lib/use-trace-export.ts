import { useQuery } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState } from 'react';
import { api, downloadPost, errorMessage } from '../../../api/client';
import { traceKeys } from '../../../api/traces';
import type { TraceExportProgress, TraceExportRequest } from '../../../api/types';
import { randomUuid } from '../../../lib/uuid';

export type ExportStep =
  | { step: 'idle' }
  | { step: 'running'; exportId: string; bytes: number }
  | { step: 'done'; exportId: string; filename: string; bytes: number }
  | { step: 'cancelled' }
  | { step: 'failed'; error: string };

// The bytes received are shown this often at most: a large file arrives in tens of thousands of parts.
const SHOW_BYTES_EVERY_MS = 250;
// The server's count of what it has written, asked this often while the file comes.
const PROGRESS_EVERY_MS = 1000;

/**
 * An export of the traces page's view as a file: its bytes as they arrive, the server's count of traces and spans
 * written (GET /traces/export/{id}), cancel, and the file saved once whole. Leaving the page stops it.
 */
export function useTraceExport() {
  const [state, setState] = useState<ExportStep>({ step: 'idle' });
  const abort = useRef<AbortController | null>(null);
  const exportId = state.step === 'running' || state.step === 'done' ? state.exportId : null;
  const progress = useQuery({
    // Asked again once the file is whole: the counts are then final.
    queryKey: [...traceKeys.exportProgress(exportId ?? ''), state.step],
    queryFn: ({ signal }) => api<TraceExportProgress>(`/traces/export/${exportId}`, { signal }),
    enabled: exportId !== null,
    refetchInterval: state.step === 'running' ? PROGRESS_EVERY_MS : false,
    retry: false,
  });

  useEffect(() => () => abort.current?.abort(), []);

  const start = useCallback(async (request: Omit<TraceExportRequest, 'export_id'>) => {
    const controller = new AbortController();
    abort.current = controller;
    const id = randomUuid();
    let shown = 0;
    setState({ step: 'running', exportId: id, bytes: 0 });
    try {
      const saved = await downloadPost(
        '/traces/export',
        { ...request, export_id: id },
        {
          signal: controller.signal,
          onBytes: (bytes) => {
            if (Date.now() - shown < SHOW_BYTES_EVERY_MS) return;
            shown = Date.now();
            setState({ step: 'running', exportId: id, bytes });
          },
        },
      );
      setState({ step: 'done', exportId: id, ...saved });
    } catch (err) {
      setState(controller.signal.aborted ? { step: 'cancelled' } : { step: 'failed', error: errorMessage(err) });
    }
  }, []);

  const cancel = useCallback(() => abort.current?.abort(), []);
  const reset = useCallback(() => setState({ step: 'idle' }), []);
  return { state, progress: progress.data, start, cancel, reset };
}
