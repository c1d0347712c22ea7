import { useEffect, useRef, useState } from 'react';
import { API_BASE } from './client';
import type { TraceRow } from './types';

export type LiveStatus = 'connecting' | 'live' | 'reconnecting' | 'off' | 'ended';

/** The stream's state; `ended` carries the server's reason in `detail`. */
export type Live = { status: LiveStatus; detail: string | null };

/**
 * New root traces of a project as the server commits them (Server-Sent Events), with the session cookie
 * (same-origin: EventSource sends it; no key ever travels in the URL). The browser reconnects by itself after a dropped connection, but not after the server ended the stream for
 * good with an `error` event: reconnecting cannot help then (a revoked key), so its reason is shown.
 */
export function useLiveTraces(projectUuid: string, enabled: boolean, onRow: (row: TraceRow) => void): Live {
  const [live, setLive] = useState<Live>({ status: 'off', detail: null });
  const handler = useRef(onRow);
  handler.current = onRow;

  useEffect(() => {
    if (!enabled || typeof EventSource === 'undefined') {
      setLive({ status: 'off', detail: null });
      return;
    }
    const params = new URLSearchParams({ project_uuid: projectUuid });
    const source = new EventSource(`${API_BASE}/traces/live?${params}`);
    const setStatus = (status: LiveStatus) => setLive({ status, detail: null });
    setStatus('connecting');
    // `ready` says the server listens: from then on no committed root is missed.
    source.addEventListener('ready', () => setStatus('live'));
    // Both the browser's "connection lost" and the server's `error` event come here; only the latter has data.
    source.onerror = (event) => {
      if (event instanceof MessageEvent) {
        source.close();
        setLive({ status: 'ended', detail: endReason(event.data) });
      } else setStatus(source.readyState === EventSource.CLOSED ? 'off' : 'reconnecting');
    };
    source.addEventListener('trace', (event) => {
      try {
        handler.current(JSON.parse((event as MessageEvent<string>).data) as TraceRow);
      } catch {
        // A malformed event: nothing to show.
      }
    });
    return () => source.close();
  }, [projectUuid, enabled]);

  return live;
}

function endReason(data: unknown): string {
  try {
    const { detail } = JSON.parse(String(data)) as { detail?: unknown };
    if (typeof detail === 'string' && detail) return detail;
  } catch {
    // Not the server's JSON: the generic reason below.
  }
  return 'The server ended the live stream.';
}
