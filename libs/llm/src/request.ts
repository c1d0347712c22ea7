import type { LlmConfiguration, LlmRequest, Message, ModelParams } from '@sightline/schemas';
import { fillTemplates } from './templates';

export type { LlmRequest };
export type ChatMessage = LlmRequest['messages'][number];
type ChatRole = ChatMessage['role'];

export class ConfigurationError extends Error {}

const ROLE: Record<Message['role'], ChatRole> = {
  system: 'system',
  user: 'user',
  assistant: 'assistant',
  example_user: 'user',
  example_assistant: 'assistant',
  function: 'function',
  tool: 'tool',
};

/** A deployed prompt's configuration overridden, field by field, by what the request gives. */
export function mergeConfiguration(
  base: LlmConfiguration | null,
  override: LlmConfiguration | null | undefined,
): LlmConfiguration {
  if (!base) return override ?? {};
  const o = override ?? {};
  return {
    model: o.model ?? o.model_params?.model ?? base.model,
    provider: o.provider ?? base.provider,
    model_params: { ...base.model_params, ...stripNullish(o.model_params ?? {}) },
    messages: o.messages?.length ? o.messages : base.messages,
    history: o.history ?? base.history,
    functions: o.functions ?? base.functions,
    function_call: o.function_call ?? base.function_call,
  };
}

function stripNullish<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v != null)) as Partial<T>;
}

function mapParams(p: ModelParams | null | undefined): LlmRequest['params'] {
  const params: LlmRequest['params'] = {};
  if (!p) return params;
  if (p.temp != null) params.temperature = p.temp;
  if (p.max_length != null) params.max_tokens = p.max_length;
  if (p.top_p != null) params.top_p = p.top_p;
  if (p.frequency_penalty != null) params.frequency_penalty = p.frequency_penalty;
  if (p.presence_penalty != null) params.presence_penalty = p.presence_penalty;
  if (p.response_format)
    params.response_format = stripNullish(p.response_format) as LlmRequest['params']['response_format'];
  return params;
}

/** Maps an llm_configuration (history before messages, templates filled from inputs) to a provider-neutral request. */
export function buildLlmRequest(config: LlmConfiguration, inputs: Record<string, unknown>): LlmRequest {
  const model = config.model ?? config.model_params?.model;
  if (!model) throw new ConfigurationError('llm_configuration.model is required');
  const provider = config.provider ?? inferProvider(model);
  const written = [...(config.history ?? []), ...(config.messages ?? [])];
  if (!written.length) throw new ConfigurationError('llm_configuration.messages must hold at least one message');
  const messages = fillTemplates(written, inputs).map((m) => ({
    role: ROLE[m.role],
    content: m.content ?? '',
    ...(m.name ? { name: m.name } : {}),
  }));
  const request: LlmRequest = { provider, model, messages, params: mapParams(config.model_params) };
  if (config.functions?.length) {
    request.tools = config.functions.map((f) => ({
      name: f.name,
      ...(f.description ? { description: f.description } : {}),
      ...(f.parameters ? { parameters: f.parameters } : {}),
    }));
    const choice = config.function_call;
    if (choice) request.tool_choice = choice === 'auto' || choice === 'none' ? choice : { name: choice };
  }
  return request;
}

function inferProvider(model: string): string {
  if (model.startsWith('claude')) return 'anthropic';
  return 'openai';
}
