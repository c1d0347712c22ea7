import { expect } from 'vitest';

type LiveEvent = { event: string; data: Record<string, unknown> };

/** Headers that authenticate as `credential`: an API key, or a session cookie (`sightline_session=...`). */
export const credentialHeaders = (credential: string): Record<string, string> =>
  credential.startsWith('sightline_session=') ? { cookie: credential } : { 'x-api-key': credential };

/**
 * Opens the live tail of `base` (a listening API's address) as `credential` (a key, or a session cookie as
 * a browser sends it) and collects its events; `ended` settles when the server ends the stream, `close`
 * ends it from this side.
 */
export async function openLive(base: string, credential: string, projectUuid: string) {
  const abort = new AbortController();
  const res = await fetch(`${base}/api/svc/v1/traces/live?project_uuid=${projectUuid}`, {
    headers: credentialHeaders(credential),
    signal: abort.signal,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
  const events: LiveEvent[] = [];
  let ended = false;
  const reading = (async () => {
    const decoder = new TextDecoder();
    let text = '';
    for await (const chunk of res.body!) {
      text += decoder.decode(chunk as Uint8Array, { stream: true });
      let end;
      while ((end = text.indexOf('\n\n')) >= 0) {
        const block = text.slice(0, end);
        text = text.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event && data) events.push({ event, data: JSON.parse(data) });
      }
    }
  })()
    .catch(() => {})
    .finally(() => (ended = true));
  await expect.poll(() => events.some((e) => e.event === 'ready')).toBe(true);
  return {
    events,
    /** The ids of the trace rows received so far. */
    traceIds: () => events.filter((e) => e.event === 'trace').map((e) => e.data.trace_id as string),
    /** True once the server has ended the stream. */
    ended: () => ended,
    close: async () => (abort.abort(), await reading),
  };
}
