import type { Deployment, PromptVersion } from '../../../api/types';

export type Prompt = { name: string; versions: PromptVersion[]; deployments: Deployment[] };

/** Versions grouped by prompt name (names in order, newest version first), with the deployments of each. */
export function promptsOf(versions: PromptVersion[], deployments: Deployment[]): Prompt[] {
  const byName = new Map<string, Prompt>();
  for (const v of versions) {
    const p = byName.get(v.name) ?? { name: v.name, versions: [], deployments: [] };
    p.versions.push(v);
    byName.set(v.name, p);
  }
  for (const d of deployments) byName.get(d.prompt_version.name)?.deployments.push(d);
  for (const p of byName.values()) p.versions.sort((a, b) => b.version_number - a.version_number);
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** The `{{variables}}` the messages use, each once, in the order they first appear. */
export function templateVariables(messages: { content?: unknown }[]): string[] {
  const names = new Set<string>();
  for (const m of messages)
    if (typeof m.content === 'string')
      for (const [, name] of m.content.matchAll(/\{\{\s*([\w.-]+)\s*\}\}/g)) names.add(name);
  return [...names];
}

/** A version as text for a diff: model, provider and parameters, then each message under its role. */
export function promptText(v: Pick<PromptVersion, 'model' | 'provider' | 'model_params' | 'messages'>): string {
  const head = [`model: ${v.model}`, `provider: ${v.provider}`];
  for (const [k, value] of Object.entries(v.model_params ?? {}))
    if (value != null) head.push(`${k}: ${JSON.stringify(value)}`);
  const messages = v.messages.map(
    (m) => `[${String(m.role ?? 'message')}]\n${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`,
  );
  return [...head, '', ...messages].join('\n');
}

/**
 * The model parameters the playground edits, as its fields hold them: a number, or the text being typed
 * ('' for one not set).
 */
export type ParamFields = {
  temp: number | string;
  max_length: number | string;
  top_p: number | string;
  response_format: 'text' | 'json_object' | 'json_schema';
};
const EDITED = ['temp', 'max_length', 'top_p', 'response_format'] as const;

const numberOr = (v: unknown): number | '' => (typeof v === 'number' ? v : '');

/** A version's stored parameters (api.md's names: temp, max_length) as the playground's fields. */
export function paramFields(params: Record<string, unknown> | null | undefined): ParamFields {
  const format = (params?.response_format as { type?: unknown } | null | undefined)?.type;
  return {
    temp: numberOr(params?.temp),
    max_length: numberOr(params?.max_length),
    top_p: numberOr(params?.top_p),
    response_format: format === 'json_object' || format === 'json_schema' ? format : 'text',
  };
}

/**
 * The parameters to run or save: the fields set, over the version's other parameters (penalties, a JSON
 * schema), which the playground keeps as they were; null when there are none. Text, the providers'
 * default, is sent only when the version named it.
 */
export function modelParams(
  fields: ParamFields,
  base: Record<string, unknown> | null | undefined,
): Record<string, unknown> | null {
  const params: Record<string, unknown> = Object.fromEntries(
    Object.entries(base ?? {}).filter(([k, v]) => v != null && !(EDITED as readonly string[]).includes(k)),
  );
  for (const k of ['temp', 'max_length', 'top_p'] as const) {
    const value = typeof fields[k] === 'number' ? fields[k] : fields[k].trim() ? Number(fields[k]) : NaN;
    if (Number.isFinite(value)) params[k] = value;
  }
  const format = base?.response_format as { type?: unknown } | null | undefined;
  if (fields.response_format === 'json_schema') params.response_format = format;
  else if (fields.response_format === 'json_object' || format?.type != null)
    params.response_format = { type: fields.response_format };
  return Object.keys(params).length ? params : null;
}
