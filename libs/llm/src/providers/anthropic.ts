import Anthropic from '@anthropic-ai/sdk';
import type { LlmRequest } from '../request';
import { clientCache, clientKey, reuseClient, sdkOptions } from './clients';
import { callDeadline, toProviderError, type CallOptions, type LlmResult, type ProviderAdapter } from './types';

// Anthropic requires max_tokens; this is used when the request gives none.
const DEFAULT_MAX_TOKENS = 4096;
const clients = clientCache<Anthropic>();

function body(req: LlmRequest): Anthropic.MessageCreateParamsNonStreaming {
  // System messages travel in `system`; function/tool results become user turns (no tool-call ids here).
  const system = req.messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n\n');
  const messages = req.messages
    .filter((m) => m.role !== 'system')
    .map((m) => ({ role: m.role === 'assistant' ? ('assistant' as const) : ('user' as const), content: m.content }));
  const params: Anthropic.MessageCreateParamsNonStreaming = {
    model: req.model,
    max_tokens: req.params.max_tokens ?? DEFAULT_MAX_TOKENS,
    messages,
    ...(system && { system }),
    ...(req.params.temperature != null && { temperature: Math.min(1, req.params.temperature) }),
    ...(req.params.top_p != null && { top_p: req.params.top_p }),
  };
  if (req.tools) {
    params.tools = req.tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: (t.parameters ?? { type: 'object', properties: {} }) as Anthropic.Tool.InputSchema,
    }));
    if (req.tool_choice) {
      params.tool_choice =
        typeof req.tool_choice === 'string' ? { type: req.tool_choice } : { type: 'tool', name: req.tool_choice.name };
    }
  }
  return params;
}

type ToolUse = { name: string; input: unknown };
// A function-calling answer has no text; it is returned as the JSON of its calls, as clients expect.
const toolText = (tools: ToolUse[]) =>
  tools.length ? JSON.stringify(tools.map((t) => ({ name: t.name, arguments: JSON.stringify(t.input) }))) : '';

function textOf(blocks: Anthropic.ContentBlock[]): string {
  const text = blocks
    .filter((b) => b.type === 'text')
    .map((b) => (b as Anthropic.TextBlock).text)
    .join('');
  return text || toolText(blocks.filter((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock[]);
}

type Usage = {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
};
// Anthropic's input_tokens leave out the cached ones; the total counts them all.
const usageOf = (u: Usage | undefined) => {
  const cacheRead = u?.cache_read_input_tokens ?? 0,
    cacheWrite = u?.cache_creation_input_tokens ?? 0;
  return {
    input_tokens: u?.input_tokens == null ? null : u.input_tokens + cacheRead + cacheWrite,
    cache_read_tokens: cacheRead,
    cache_write_tokens: cacheWrite,
  };
};

type Deadline = ReturnType<typeof callDeadline>;

/** The SDK client for these options, shared by the calls that use the same ones. */
function clientFor(opts: CallOptions): Anthropic {
  return reuseClient(clients, clientKey(opts), () => new Anthropic(sdkOptions(opts)));
}

/** One answer, whole. */
async function complete(client: Anthropic, req: LlmRequest, signal: AbortSignal): Promise<LlmResult> {
  const res = await client.messages.create(body(req), { signal });
  return {
    content: textOf(res.content),
    model: res.model,
    ...usageOf(res.usage),
    output_tokens: res.usage?.output_tokens ?? null,
  };
}

/** One answer, streamed: its text goes to onDelta as it arrives. */
async function stream(
  client: Anthropic,
  req: LlmRequest,
  deadline: Deadline,
  onDelta: (text: string) => void,
): Promise<LlmResult> {
  const { signal } = deadline;
  const events = await client.messages.create({ ...body(req), stream: true }, { signal });
  let content = '',
    model = req.model;
  let usage: Usage | undefined;
  let output: number | null = null;
  const tools: (ToolUse & { json: string })[] = [];
  deadline.alive();
  for await (const event of events) {
    deadline.alive();
    if (event.type === 'message_start') {
      model = event.message.model;
      usage = event.message.usage;
      output = event.message.usage?.output_tokens ?? null;
    } else if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
      tools.push({ name: event.content_block.name, input: {}, json: '' });
    } else if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
      content += event.delta.text;
      onDelta(event.delta.text);
    } else if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta' && tools.length) {
      tools[tools.length - 1].json += event.delta.partial_json;
    } else if (event.type === 'message_delta' && event.usage) {
      output = event.usage.output_tokens ?? output;
    }
  }
  // The SDK may end a stream quietly when it is aborted: a stalled stream must still be an error.
  if (signal.aborted) throw signal.reason;
  if (!content && tools.length) {
    content = toolText(tools.map((t) => ({ name: t.name, input: t.json ? JSON.parse(t.json) : {} })));
    onDelta(content);
  }
  return { content, model, ...usageOf(usage), output_tokens: output };
}

export function anthropicAdapter(): ProviderAdapter {
  return {
    async call(req: LlmRequest, opts: CallOptions): Promise<LlmResult> {
      const client = clientFor(opts);
      const deadline = callDeadline(opts);
      const { signal } = deadline;
      try {
        return await (opts.onDelta ? stream(client, req, deadline, opts.onDelta) : complete(client, req, signal));
      } catch (err) {
        throw toProviderError(err, 'anthropic', signal);
      } finally {
        deadline.done();
      }
    },
  };
}
