import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useLiveTraces } from '../../../api/live';
import type { TraceRow } from '../../../api/types';
import { liveRowFits, type TraceView } from '../../../lib/trace-view';

/**
 * Live tail over a page of traces. A new root trace goes straight to the top only when it certainly
 * belongs to the view (page 1, its status fits, no search or filter the server must judge), the tail is
 * not paused, and the user is not reading (pointer over the rows, or scrolled down). Otherwise it waits
 * behind the "N new" bar, so that rows never move under the pointer. A row already on screen is updated
 * where it is.
 */
export function useLiveRows(
  projectUuid: string,
  view: TraceView,
  results: TraceRow[] | undefined,
  refetch: () => void,
) {
  const [paused, setPaused] = useState(false);
  const [added, setAdded] = useState<TraceRow[]>([]);
  const [queued, setQueued] = useState<TraceRow[]>([]);
  const [updates, setUpdates] = useState<ReadonlyMap<string, TraceRow>>(new Map());
  const [fresh, setFresh] = useState<ReadonlySet<string>>(new Set());
  const reading = useRef(false);

  // A new answer from the server holds the rows that came live before it.
  useEffect(() => {
    setAdded([]);
    setUpdates(new Map());
  }, [results]);
  const viewKey = JSON.stringify([projectUuid, view]);
  useEffect(() => setQueued([]), [viewKey]);

  const rows = useMemo(() => {
    const base = results ?? [];
    const known = new Set(base.map((r) => r.trace_id));
    return [...added.filter((r) => !known.has(r.trace_id)), ...base].map((r) => updates.get(r.trace_id) ?? r);
  }, [results, added, updates]);

  const current = useRef({ paused, view, rows, queued });
  current.current = { paused, view, rows, queued };

  const canShowDirectly = () => {
    const { paused, view } = current.current;
    return !paused && !reading.current && view.page === 1;
  };
  const show = useCallback((incoming: TraceRow[]) => {
    if (!incoming.length) return;
    setAdded((prev) => [...incoming, ...prev.filter((r) => !incoming.some((n) => n.trace_id === r.trace_id))]);
    setFresh(new Set(incoming.map((r) => r.trace_id)));
  }, []);
  // New rows are marked for a moment, then look like the others.
  useEffect(() => {
    if (!fresh.size) return;
    const timer = setTimeout(() => setFresh(new Set()), 2500);
    return () => clearTimeout(timer);
  }, [fresh]);

  const live = useLiveTraces(projectUuid, true, (row) => {
    const { view, rows } = current.current;
    if (rows.some((r) => r.trace_id === row.trace_id)) {
      setUpdates((prev) => new Map(prev).set(row.trace_id, row));
      return;
    }
    const fits = liveRowFits(view, row);
    if (fits === false) return;
    if (fits && canShowDirectly()) show([row]);
    else setQueued((prev) => [row, ...prev.filter((r) => r.trace_id !== row.trace_id)]);
  });

  /** Shows what waits: at the top when the rows can simply go there, else by asking the server again. */
  const flush = useCallback(() => {
    const { view, queued } = current.current;
    if (view.page === 1 && queued.every((r) => liveRowFits(view, r) === true)) show(queued);
    else refetch();
    setQueued([]);
  }, [show, refetch]);

  const setReading = useCallback(
    (r: boolean) => {
      reading.current = r;
      // The pointer left and the list is at the top: what queued while reading can come in now.
      if (
        !r &&
        current.current.queued.length &&
        canShowDirectly() &&
        current.current.queued.every((q) => liveRowFits(current.current.view, q) === true)
      )
        flush();
    },
    [flush],
  );

  return {
    status: live.status,
    /** Why the server ended the stream, when it did. */
    ended: live.detail,
    paused,
    rows,
    added: added.length,
    fresh,
    pending: queued.length,
    flush,
    setReading,
    togglePause: () => setPaused((p) => !p),
  };
}
