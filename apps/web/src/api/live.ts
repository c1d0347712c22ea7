import { useEffect, useRef, useState } from 'react';
import { API_BASE } from './client';
import { useSession } from './session';
import type { TraceRow } from './types';

export type LiveStatus = 'connecting' | 'live' | 'reconnecting' | 'off';

/**
 * New root traces of a project as the server commits them (Server-Sent Events). EventSource cannot send
 * headers, so the key travels as the `api_key` query parameter, which this endpoint alone accepts. The
 * browser reconnects by itself after a dropped connection.
 */
export function useLiveTraces(projectUuid: string, enabled: boolean, onRow: (row: TraceRow) => void): LiveStatus {
  const { apiKey } = useSession();
  const [status, setStatus] = useState<LiveStatus>('off');
  const handler = useRef(onRow);
  handler.current = onRow;

  useEffect(() => {
    if (!enabled || !apiKey || typeof EventSource === 'undefined') {
      setStatus('off');
      return;
    }
    const params = new URLSearchParams({ project_uuid: projectUuid, api_key: apiKey });
    const source = new EventSource(`${API_BASE}/traces/live?${params}`);
    setStatus('connecting');
    // `ready` says the server listens: from then on no committed root is missed.
    source.addEventListener('ready', () => setStatus('live'));
    source.onerror = () => setStatus(source.readyState === EventSource.CLOSED ? 'off' : 'reconnecting');
    source.addEventListener('trace', (event) => {
      try {
        handler.current(JSON.parse((event as MessageEvent<string>).data) as TraceRow);
      } catch {
        // A malformed event: nothing to show.
      }
    });
    return () => source.close();
  }, [projectUuid, enabled, apiKey]);

  return status;
}
