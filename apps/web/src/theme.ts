import { createTheme } from '@mantine/core';

export const theme = createTheme({
  primaryColor: 'indigo',
  defaultRadius: 'md',
  fontFamily: 'Inter, ui-sans-serif, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  fontFamilyMonospace: 'ui-monospace, "JetBrains Mono", "SFMono-Regular", Menlo, Consolas, monospace',
  headings: { fontWeight: '650' },
  cursorType: 'pointer',
});

/** Badge colours of span kinds and message roles, used the same everywhere. */
export const KIND_COLORS: Record<string, string> = {
  llm: 'violet',
  chain: 'blue',
  tool: 'orange',
  retriever: 'teal',
  agent: 'pink',
  embedding: 'cyan',
  prompt: 'grape',
  parser: 'lime',
  // Kinds OpenTelemetry conventions name (OpenInference's, OpenLLMetry's).
  reranker: 'teal',
  guardrail: 'yellow',
  evaluator: 'green',
  workflow: 'indigo',
  task: 'blue',
};
export const ROLE_COLORS: Record<string, string> = {
  system: 'gray',
  user: 'blue',
  assistant: 'violet',
  tool: 'orange',
  function: 'orange',
  example_user: 'cyan',
  example_assistant: 'grape',
};
