import { useLocalStorage } from '@mantine/hooks';

/**
 * The content columns a project's traces table shows beside its figures: the root's input, output and error
 * message, and the values of some metadata keys. Kept per project in this browser: projects log different
 * keys. The error column follows the status filter ("error": shown) until it is chosen either way.
 */
export type ContentColumns = { input: boolean; output: boolean; error: boolean | null; metadata: string[] };

const NO_CONTENT: ContentColumns = { input: false, output: false, error: null, metadata: [] };

/** The most metadata columns a table shows (as many as the listing reads). */
export const MAX_METADATA_COLUMNS = 10;

export function useContentColumns(projectUuid: string) {
  return useLocalStorage<ContentColumns>({
    key: `sightline.traceContent.${projectUuid}`,
    defaultValue: NO_CONTENT,
    getInitialValueInEffect: false,
  });
}

/** Whether the error column shows: as chosen, else when the view lists failed traces only. */
export const showsError = (c: ContentColumns, status: string) => c.error ?? status === 'error';

/**
 * What a cell shows of a payload: its first non-empty line, cut to `max` characters, and whether it reads
 * as JSON (drawn in monospace).
 */
export function compactText(text: string | null | undefined, max = 160): { line: string; json: boolean } | null {
  if (text == null) return null;
  const trimmed = text.trim();
  if (!trimmed) return null;
  const line = trimmed
    .split('\n')
    .find((l) => l.trim())!
    .trim();
  return {
    line: line.length > max ? `${line.slice(0, max)}…` : line,
    json: trimmed.startsWith('{') || trimmed.startsWith('['),
  };
}

/** A metadata value as a cell's text: a string as it is, anything else as JSON. */
export const metadataText = (value: unknown) =>
  value === undefined ? null : typeof value === 'string' ? value : JSON.stringify(value);
