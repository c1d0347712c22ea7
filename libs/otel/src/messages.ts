// Chat messages from every convention's shape to the one Sightline stores in `configuration.messages`:
// OpenAI's (role, content as text or OpenAI content parts, tool_calls, tool_call_id), which the clients
// and the console already read.

import { MAX_NESTING, nestsDeeperThan, parseStorableJson } from '@sightline/core';
import type { AttrValue } from './otlp';

type ToolCall = { id?: string; type: 'function'; function: { name: string; arguments: string } };
type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };
export type Message = {
  role: string;
  content: string | ContentPart[] | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
};

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const asText = (v: unknown): string => (typeof v === 'string' ? v : v == null ? '' : JSON.stringify(v));

/** JSON text parsed, or undefined when it is not JSON (or nests too deep to be stored as JSON). */
export function parseJson(value: AttrValue | undefined): unknown {
  if (typeof value !== 'string') return value ?? undefined;
  const t = value.trimStart();
  if (!t.startsWith('{') && !t.startsWith('[') && !t.startsWith('"')) return undefined;
  if (nestsDeeperThan(value, MAX_NESTING)) return undefined;
  try {
    return parseStorableJson(value);
  } catch {
    return undefined;
  }
}

function toolCall(id: unknown, name: unknown, args: unknown): ToolCall {
  return {
    ...(str(id) && { id: str(id) }),
    type: 'function',
    function: { name: asText(name), arguments: asText(args) },
  };
}

type Parts = { text: string[]; images: string[]; toolCalls: ToolCall[]; toolResult?: { id?: string; content: string } };

/**
 * One content part of any convention: GenAI semconv parts (`text`/`content`, `tool_call`,
 * `tool_call_response`, `uri`), OpenAI's (`text`, `image_url`), the Vercel AI SDK's (`tool-call`,
 * `tool-result`) and Anthropic's (`tool_use`, `tool_result`).
 */
function readPart(part: unknown, into: Parts): void {
  if (typeof part === 'string') return void into.text.push(part);
  if (!isObj(part)) return;
  switch (part.type) {
    case 'tool_call':
    case 'tool-call':
    case 'function_call':
      into.toolCalls.push(
        toolCall(
          part.id ?? part.toolCallId ?? part.call_id,
          part.name ?? part.toolName,
          part.arguments ?? part.args ?? part.input,
        ),
      );
      return;
    case 'tool_use':
      into.toolCalls.push(toolCall(part.id, part.name, part.input));
      return;
    case 'tool_call_response':
    case 'tool-result':
    case 'tool_result':
      into.toolResult = {
        id: str(part.id ?? part.toolCallId ?? part.tool_use_id),
        content: asText(part.response ?? part.result ?? part.output ?? part.content),
      };
      return;
    case 'image_url':
      into.images.push(asText(isObj(part.image_url) ? part.image_url.url : part.image_url));
      return;
    case 'uri':
    case 'image':
      if (str(part.uri) ?? str(part.url) ?? str(part.image))
        into.images.push((str(part.uri) ?? str(part.url) ?? str(part.image))!);
      else into.text.push(`[${part.modality ?? part.type}]`);
      return;
    case 'reasoning':
    case 'thinking':
      return;
    default: {
      const text = str(part.text) ?? str(part.content);
      if (text !== undefined) into.text.push(text);
      else if (part.type) into.text.push(`[${asText(part.type)}]`);
    }
  }
}

/** A message of any convention's JSON shape, or null when it is not one. */
function normalizeMessage(raw: unknown, fallbackRole = 'user'): Message | null {
  if (typeof raw === 'string') return { role: fallbackRole, content: raw };
  if (!isObj(raw)) return null;
  const role = str(raw.role) ?? fallbackRole;
  const parts: Parts = { text: [], images: [], toolCalls: [] };
  const content = raw.parts ?? raw.content;
  if (Array.isArray(content)) for (const p of content) readPart(p, parts);
  else if (typeof content === 'string') parts.text.push(content);
  else if (content != null) parts.text.push(asText(content));
  for (const call of Array.isArray(raw.tool_calls) ? raw.tool_calls : []) {
    if (!isObj(call)) continue;
    const fn = isObj(call.function) ? call.function : call;
    parts.toolCalls.push(toolCall(call.id, fn.name, fn.arguments));
  }
  const text = parts.text.join('\n');
  const message: Message = {
    role: parts.toolResult ? 'tool' : role,
    content: parts.images.length
      ? [
          ...(text ? [{ type: 'text' as const, text }] : []),
          ...parts.images.map((url) => ({ type: 'image_url' as const, image_url: { url } })),
        ]
      : parts.toolResult
        ? [text, parts.toolResult.content].filter(Boolean).join('\n')
        : text || (parts.toolCalls.length ? null : ''),
  };
  if (parts.toolCalls.length) message.tool_calls = parts.toolCalls;
  const toolCallId = parts.toolResult?.id ?? str(raw.tool_call_id) ?? str(raw.toolCallId) ?? str(raw.id);
  if (message.role === 'tool' && toolCallId) message.tool_call_id = toolCallId;
  if (str(raw.name)) message.name = str(raw.name);
  return message;
}

/** A JSON array of messages (or one message) in any convention's shape. */
export function messageList(value: unknown, fallbackRole = 'user'): Message[] | undefined {
  const items = Array.isArray(value) ? value : value == null ? [] : [value];
  const messages = items.map((m) => normalizeMessage(m, fallbackRole)).filter((m): m is Message => m !== null);
  return messages.length ? messages : undefined;
}

/** What an output message says as the span's `output`: its text, else its tool calls as JSON. */
export function outputText(message: Message | undefined): string | undefined {
  if (!message) return undefined;
  const text =
    typeof message.content === 'string'
      ? message.content
      : (message.content ?? [])
          .filter((p): p is Extract<ContentPart, { type: 'text' }> => p.type === 'text')
          .map((p) => p.text)
          .join('\n');
  if (text) return text;
  if (message.tool_calls?.length)
    return JSON.stringify(message.tool_calls.map((c) => ({ name: c.function.name, arguments: c.function.arguments })));
  return text;
}

/**
 * Flattened messages (`<prefix>N.<rest>`) as one object per index, ordered by index: the shape OpenLLMetry
 * (`gen_ai.prompt.0.role`) and OpenInference (`llm.input_messages.0.message.role`) write.
 */
export function flattened(
  attrs: Record<string, AttrValue>,
  keys: readonly string[],
  prefix: string,
  used: Set<string>,
): Obj[] {
  let byIndex: Map<number, Obj> | undefined;
  for (const key of keys) {
    if (!key.startsWith(prefix)) continue;
    const rest = key.slice(prefix.length);
    const dot = rest.indexOf('.');
    const index = Number(dot < 0 ? rest : rest.slice(0, dot));
    if (!Number.isInteger(index) || index < 0 || dot < 0) continue;
    used.add(key);
    byIndex ??= new Map();
    let entry = byIndex.get(index);
    if (!entry) byIndex.set(index, (entry = {}));
    setPath(entry, rest.slice(dot + 1).split('.'), attrs[key]);
  }
  return byIndex ? [...byIndex.entries()].sort(([a], [b]) => a - b).map(([, v]) => v) : [];
}

/** Sets `path` in `obj`; numeric segments make arrays (`tool_calls.0.name`). */
function setPath(obj: Obj, path: string[], value: unknown): void {
  let node: Obj | unknown[] = obj;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i];
    const nextIsIndex = /^\d+$/.test(path[i + 1]);
    const container = node as Record<string, unknown>;
    if (typeof container[key] !== 'object' || container[key] === null) container[key] = nextIsIndex ? [] : {};
    node = container[key] as Obj | unknown[];
  }
  (node as Record<string, unknown>)[path[path.length - 1]] = value;
}

/** An OpenInference flattened message (`message.role`, `message.contents.N.message_content.text`, ...) in OpenAI's shape. */
export function openInferenceMessage(entry: Obj): Obj {
  const m = isObj(entry.message) ? entry.message : entry;
  const contents = Array.isArray(m.contents)
    ? m.contents.map((c) => {
        const part = isObj(c) && isObj(c.message_content) ? c.message_content : {};
        return part.type === 'image' && isObj(part.image) && isObj(part.image.image)
          ? { type: 'image_url', image_url: { url: part.image.image.url } }
          : { type: 'text', text: part.text };
      })
    : undefined;
  const calls = Array.isArray(m.tool_calls)
    ? m.tool_calls.map((c) => {
        const call = isObj(c) && isObj(c.tool_call) ? c.tool_call : {};
        const fn = isObj(call.function) ? call.function : {};
        return { id: call.id, function: { name: fn.name, arguments: fn.arguments } };
      })
    : undefined;
  return {
    role: m.role,
    content: m.content ?? contents,
    ...(calls && { tool_calls: calls }),
    ...(m.tool_call_id !== undefined && { tool_call_id: m.tool_call_id }),
    ...(m.name !== undefined && { name: m.name }),
  };
}
