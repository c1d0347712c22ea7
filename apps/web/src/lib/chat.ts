// Messages of an LLM span as a conversation: configuration.history and configuration.messages (what was
// sent), then the output (what came back). Providers shape content differently (a string, OpenAI's parts,
// Anthropic's blocks, tool and function calls); each is brought to one list of parts here so that the
// view has one thing to draw.

export type ChatPart =
  | { type: 'text'; text: string }
  | { type: 'image'; url: string }
  | { type: 'tool_call'; name: string; arguments: string; id?: string }
  | { type: 'tool_result'; content: string; id?: string }
  | { type: 'json'; value: unknown };

export type ChatMessage = { role: string; name?: string; parts: ChatPart[]; fromOutput?: boolean };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown) => (typeof v === 'string' ? v : v == null ? '' : JSON.stringify(v, null, 2));

/** Arguments arrive as a JSON string (OpenAI) or an object (Anthropic): shown pretty-printed either way. */
function prettyArguments(args: unknown): string {
  if (typeof args === 'string') {
    try {
      return JSON.stringify(JSON.parse(args), null, 2);
    } catch {
      return args;
    }
  }
  return JSON.stringify(args ?? {}, null, 2);
}

function contentParts(content: unknown): ChatPart[] {
  if (content == null) return [];
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return [{ type: 'json', value: content }];
  return content.flatMap((block): ChatPart[] => {
    if (typeof block === 'string') return [{ type: 'text', text: block }];
    if (!isObject(block)) return [{ type: 'json', value: block }];
    switch (block.type) {
      case 'text':
      case 'input_text':
      case 'output_text':
        return [{ type: 'text', text: str(block.text) }];
      case 'image_url':
        return [{ type: 'image', url: str(isObject(block.image_url) ? block.image_url.url : block.image_url) }];
      case 'image':
        return [
          {
            type: 'image',
            url: isObject(block.source) && block.source.type === 'url' ? str(block.source.url) : '(inline image)',
          },
        ];
      case 'tool_use':
        return [
          {
            type: 'tool_call',
            name: str(block.name),
            arguments: prettyArguments(block.input),
            id: block.id as string | undefined,
          },
        ];
      case 'tool_result':
        return [
          {
            type: 'tool_result',
            content: contentParts(block.content)
              .map((p) => (p.type === 'text' ? p.text : str(p)))
              .join('\n'),
            id: block.tool_use_id as string | undefined,
          },
        ];
      default:
        return [{ type: 'json', value: block }];
    }
  });
}

function normalizeMessage(raw: unknown): ChatMessage {
  if (!isObject(raw)) return { role: 'unknown', parts: contentParts(raw) };
  const role = typeof raw.role === 'string' ? raw.role : 'unknown';
  const parts = contentParts(raw.content);
  if (role === 'tool' || role === 'function') {
    // A tool's answer: the content is the result, tied to the call by its id.
    const text = parts.map((p) => (p.type === 'text' ? p.text : str(p))).join('\n');
    return {
      role,
      name: raw.name as string | undefined,
      parts: [{ type: 'tool_result', content: text, id: raw.tool_call_id as string | undefined }],
    };
  }
  for (const call of Array.isArray(raw.tool_calls) ? raw.tool_calls : []) {
    const fn = isObject(call) && isObject(call.function) ? call.function : (call as Record<string, unknown>);
    parts.push({
      type: 'tool_call',
      name: str(fn?.name),
      arguments: prettyArguments(fn?.arguments),
      id: isObject(call) ? (call.id as string | undefined) : undefined,
    });
  }
  if (isObject(raw.function_call))
    parts.push({
      type: 'tool_call',
      name: str(raw.function_call.name),
      arguments: prettyArguments(raw.function_call.arguments),
    });
  return { role, name: typeof raw.name === 'string' ? raw.name : undefined, parts };
}

/**
 * An output is a string; an LLM span's may hold the answer as JSON (a message, or a list of tool calls)
 * when a client serialized one: shown as such, else as text.
 */
export function outputMessage(output: string | null | undefined): ChatMessage | null {
  if (output == null || output === '') return null;
  const trimmed = output.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      const value = JSON.parse(output);
      if (isObject(value) && ('role' in value || 'tool_calls' in value || 'function_call' in value))
        return { ...normalizeMessage({ role: 'assistant', ...value }), fromOutput: true };
      if (Array.isArray(value) && value.every((c) => isObject(c) && (isObject(c.function) || 'name' in c)))
        return { ...normalizeMessage({ role: 'assistant', tool_calls: value }), fromOutput: true };
    } catch {
      // Not JSON after all: text.
    }
  }
  return { role: 'assistant', parts: [{ type: 'text', text: output }], fromOutput: true };
}

/** The conversation of a span, or an empty list when it has no messages (not an LLM call). */
export function chatOf(span: {
  configuration?: Record<string, unknown> | null;
  output?: string | null;
}): ChatMessage[] {
  const config = span.configuration ?? {};
  const sent = [
    ...(Array.isArray(config.history) ? config.history : []),
    ...(Array.isArray(config.messages) ? config.messages : []),
  ];
  if (!sent.length) return [];
  const reply = outputMessage(span.output);
  return [...sent.map(normalizeMessage), ...(reply ? [reply] : [])];
}
