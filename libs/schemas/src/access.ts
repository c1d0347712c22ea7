import { z } from 'zod';
import { IndexedText, Uuid } from './common';

/** admin: everything, key management included; member: reads and writes data; viewer: reads only. */
export const ApiKeyRole = z.enum(['admin', 'member', 'viewer']);
export type ApiKeyRole = z.infer<typeof ApiKeyRole>;

export const ApiKeyCreateSchema = z.object({
  role: ApiKeyRole,
  /** Who holds the key (a person's email, a service's name); comments and annotations record it. */
  label: IndexedText.min(1),
});

export const ApiKeySchema = z.object({
  id: z.string(),
  label: z.string().nullable(),
  role: ApiKeyRole,
  api_key: z.string().describe('the last 4 characters only'),
  created_at: z.string(),
  last_used_at: z.string().nullable().describe('updated at most once per AUTH_CACHE_TTL_MS on each API node'),
});
export const ApiKeyCreatedSchema = ApiKeySchema.extend({
  key: z.string().describe('the whole key: shown this once, never stored'),
});
export const ApiKeyParams = z.object({ id: Uuid });

/** The caller, as its key says. */
export const WhoAmISchema = z.object({
  organization_id: z.string(),
  organization_name: z.string(),
  role: ApiKeyRole,
  label: z.string().nullable(),
  key_id: z.string(),
  remark_author: z
    .string()
    .describe(
      "the `user_id` of this key's comments and annotations: its label, else `key:<key_id>`; only their author deletes a comment",
    ),
});
