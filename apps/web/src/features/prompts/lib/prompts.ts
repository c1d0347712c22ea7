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
