const PLACEHOLDER = /\{\{\s*([^{}\s]+)\s*\}\}/g;

export class MissingVariablesError extends Error {
  constructor(readonly names: string[]) {
    super(`missing template variable${names.length > 1 ? 's' : ''}: ${names.join(', ')}`);
  }
}

const asText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** The distinct `{{name}}` placeholders of a text, in order of appearance. */
function placeholders(text: string): string[] {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1]))];
}

/** Fills `{{name}}` placeholders from `inputs`; throws MissingVariablesError naming every unfilled one. */
export function fillTemplates<T extends { content?: string | null }>(
  messages: readonly T[],
  inputs: Record<string, unknown>,
): T[] {
  const missing = new Set<string>();
  for (const m of messages)
    for (const name of placeholders(m.content ?? '')) if (!Object.hasOwn(inputs, name)) missing.add(name);
  if (missing.size) throw new MissingVariablesError([...missing]);
  return messages.map((m) =>
    m.content ? { ...m, content: m.content.replace(PLACEHOLDER, (_, name: string) => asText(inputs[name])) } : m,
  );
}
