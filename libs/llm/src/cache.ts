import { createHash } from 'node:crypto';
import type { LlmRequest } from './request';

/** Everything that determines a completion's output, hashed: provider, model, params, messages, tools. */
export function cacheDigest(organizationId: string, req: LlmRequest): string {
  const material = JSON.stringify([
    organizationId,
    req.provider,
    req.model,
    req.params,
    req.messages,
    req.tools ?? null,
    req.tool_choice ?? null,
  ]);
  return createHash('sha256').update(material).digest('hex');
}
