import OpenAI, { AzureOpenAI } from 'openai';
import type { ChatCompletionCreateParamsBase } from 'openai/resources/chat/completions';
import type { LlmRequest } from '../request';
import { clientCache, clientKey, reuseClient, sdkOptions } from './clients';
import { callDeadline, toProviderError, type CallOptions, type LlmResult, type ProviderAdapter } from './types';

const clients = clientCache<OpenAI>();

function body(req: LlmRequest): ChatCompletionCreateParamsBase {
  const params: ChatCompletionCreateParamsBase = {
    model: req.model,
    messages: req.messages.map((m) => ({
      role: m.role,
      content: m.content,
      ...(m.name ? { name: m.name } : {}),
    })) as ChatCompletionCreateParamsBase['messages'],
    ...req.params,
  } as ChatCompletionCreateParamsBase;
  if (req.tools) {
    params.tools = req.tools.map((t) => ({ type: 'function', function: t }));
    if (req.tool_choice) {
      params.tool_choice =
        typeof req.tool_choice === 'string'
          ? req.tool_choice
          : { type: 'function', function: { name: req.tool_choice.name } };
    }
  }
  return params;
}

type ToolCall = { function?: { name?: string; arguments?: string } };
// A function-calling answer has no text; it is returned as the JSON of its calls, as clients expect.
const toolCallText = (calls: ToolCall[] | undefined) =>
  calls?.length ? JSON.stringify(calls.map((c) => ({ name: c.function?.name, arguments: c.function?.arguments }))) : '';

type Usage = {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
};
// prompt_tokens already includes the cached ones.
const usageOf = (u: Usage | null | undefined) => ({
  input_tokens: u?.prompt_tokens ?? null,
  output_tokens: u?.completion_tokens ?? null,
  cache_read_tokens: u?.prompt_tokens_details?.cached_tokens ?? 0,
});

type Deadline = ReturnType<typeof callDeadline>;

/** The SDK client for these options, shared by the calls that use the same ones. */
function clientFor(kind: 'openai' | 'azure', apiVersion: string | undefined, opts: CallOptions): OpenAI {
  return reuseClient(clients, clientKey(opts, kind, apiVersion ?? null), () =>
    kind === 'azure'
      ? new AzureOpenAI({ ...sdkOptions(opts), apiVersion: apiVersion ?? '2024-10-21' })
      : new OpenAI(sdkOptions(opts)),
  );
}

/** One answer, whole. */
async function complete(client: OpenAI, req: LlmRequest, signal: AbortSignal): Promise<LlmResult> {
  const res = await client.chat.completions.create({ ...body(req), stream: false }, { signal });
  const message = res.choices[0]?.message;
  return {
    content: message?.content || toolCallText(message?.tool_calls as ToolCall[] | undefined),
    model: res.model ?? req.model,
    ...usageOf(res.usage),
  };
}

/** One answer, streamed: its text goes to onDelta as it arrives. */
async function stream(
  client: OpenAI,
  req: LlmRequest,
  deadline: Deadline,
  onDelta: (text: string) => void,
): Promise<LlmResult> {
  const { signal } = deadline;
  const chunks = await client.chat.completions.create(
    { ...body(req), stream: true, stream_options: { include_usage: true } },
    { signal },
  );
  let content = '',
    model = req.model;
  let usage: Usage | null = null;
  const calls: ToolCall[] = [];
  deadline.alive();
  for await (const chunk of chunks) {
    deadline.alive();
    model = chunk.model ?? model;
    if (chunk.usage) usage = chunk.usage;
    const delta = chunk.choices[0]?.delta;
    if (delta?.content) {
      content += delta.content;
      onDelta(delta.content);
    }
    for (const call of delta?.tool_calls ?? []) {
      const target = (calls[call.index] ??= { function: { name: '', arguments: '' } });
      target.function!.name += call.function?.name ?? '';
      target.function!.arguments += call.function?.arguments ?? '';
    }
  }
  // The SDK ends a stream quietly when it is aborted: a stalled stream must still be an error.
  if (signal.aborted) throw signal.reason;
  if (!content && calls.length) {
    content = toolCallText(calls);
    onDelta(content);
  }
  return { content, model, ...usageOf(usage) };
}

/** OpenAI's chat completions protocol: OpenAI itself, Azure OpenAI, and any compatible server. */
export function openAiAdapter(kind: 'openai' | 'azure', provider: string, apiVersion?: string): ProviderAdapter {
  return {
    async call(req: LlmRequest, opts: CallOptions): Promise<LlmResult> {
      const client = clientFor(kind, apiVersion, opts);
      const deadline = callDeadline(opts);
      const { signal } = deadline;
      try {
        return await (opts.onDelta ? stream(client, req, deadline, opts.onDelta) : complete(client, req, signal));
      } catch (err) {
        throw toProviderError(err, provider, signal);
      } finally {
        deadline.done();
      }
    },
  };
}
