import Anthropic from '@anthropic-ai/sdk';
import type { LlmRequest } from '../request';
import { toProviderError, type CallOptions, type LlmResult, type ProviderAdapter } from './types';

// Anthropic requires max_tokens; this is used when the request gives none.
const DEFAULT_MAX_TOKENS = 4096;

function body(req: LlmRequest): Anthropic.MessageCreateParamsNonStreaming {
  // System messages travel in `system`; function/tool results become user turns (no tool-call ids here).
  const system = req.messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n\n');
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
    params.tools = req.tools.map((t) => ({ name: t.name, description: t.description, input_schema: (t.parameters ?? { type: 'object', properties: {} }) as Anthropic.Tool.InputSchema }));
    if (req.tool_choice) {
      params.tool_choice = typeof req.tool_choice === 'string' ? { type: req.tool_choice } : { type: 'tool', name: req.tool_choice.name };
    }
  }
  return params;
}

function textOf(blocks: Anthropic.ContentBlock[]): string {
  const text = blocks.filter((b) => b.type === 'text').map((b) => (b as Anthropic.TextBlock).text).join('');
  if (text) return text;
  const tools = blocks.filter((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock[];
  return tools.length ? JSON.stringify(tools.map((t) => ({ name: t.name, arguments: JSON.stringify(t.input) }))) : '';
}

export function anthropicAdapter(): ProviderAdapter {
  return {
    async call(req: LlmRequest, opts: CallOptions): Promise<LlmResult> {
      const client = new Anthropic({ apiKey: opts.apiKey, baseURL: opts.baseURL, timeout: opts.timeoutMs, maxRetries: opts.maxRetries });
      try {
        if (!opts.onDelta) {
          const res = await client.messages.create(body(req));
          return { content: textOf(res.content), model: res.model, input_tokens: res.usage?.input_tokens ?? null, output_tokens: res.usage?.output_tokens ?? null };
        }
        const stream = await client.messages.create({ ...body(req), stream: true });
        let content = '', model = req.model;
        let input: number | null = null, output: number | null = null;
        for await (const event of stream) {
          if (event.type === 'message_start') {
            model = event.message.model;
            input = event.message.usage?.input_tokens ?? null;
            output = event.message.usage?.output_tokens ?? null;
          } else if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
            content += event.delta.text;
            opts.onDelta(event.delta.text);
          } else if (event.type === 'message_delta' && event.usage) {
            output = event.usage.output_tokens ?? output;
          }
        }
        return { content, model, input_tokens: input, output_tokens: output };
      } catch (err) {
        throw toProviderError(err, 'anthropic');
      }
    },
  };
}
