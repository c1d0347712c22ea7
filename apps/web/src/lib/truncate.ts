/** Past this many characters a payload is shown cut, with a way to show all of it. */
const PREVIEW_CHARS = 20_000;
/** Past this, even "show all" draws plain text rather than Markdown, which would take seconds to lay out. */
export const MARKDOWN_LIMIT = 100_000;

export function preview(text: string, all: boolean): { shown: string; hidden: number } {
  if (all || text.length <= PREVIEW_CHARS) return { shown: text, hidden: 0 };
  return { shown: text.slice(0, PREVIEW_CHARS), hidden: text.length - PREVIEW_CHARS };
}

/** A value as readable text: strings as they are, anything else as indented JSON. */
export const asText = (value: unknown): string =>
  typeof value === 'string' ? value : (JSON.stringify(value, null, 2) ?? String(value));
