import { z } from 'zod';
import { IndexedText, Uuid } from './common';

/** admin: everything, key management included; member: reads and writes data; viewer: reads only. */
export const ApiKeyRole = z.enum(['admin', 'member', 'viewer']);
export type ApiKeyRole = z.infer<typeof ApiKeyRole>;

/** A person as other people see them: beside their invitations, keys and changes. */
export const PersonSchema = z.object({ id: z.string(), email: z.string(), name: z.string() });

export const ApiKeyCreateSchema = z.object({
  /** No higher than the role of the person who makes it. */
  role: ApiKeyRole,
  /** Who holds the key (a person's email, a service's name); comments and annotations record it. */
  label: IndexedText.min(1),
  service: z
    .boolean()
    .default(false)
    .describe("an admin's key for a service: made by no one, so it outlives its maker's removal"),
});

export const ApiKeySchema = z.object({
  id: z.string(),
  label: z.string().nullable(),
  role: ApiKeyRole,
  api_key: z.string().describe('the last 4 characters only'),
  created_at: z.string(),
  last_used_at: z.string().nullable().describe('updated at most once per AUTH_CACHE_TTL_MS on each API node'),
  created_by: PersonSchema.nullable().describe(
    'the person who made it (it is revoked when they leave the organization); null for a service key or one made with a key',
  ),
});
export const ApiKeyCreatedSchema = ApiKeySchema.extend({
  key: z.string().describe('the whole key: shown this once, never stored'),
});
export const ApiKeyParams = z.object({ id: Uuid });

/** The caller: the organization and role its key or session works with, and the person signed in. */
export const WhoAmISchema = z.object({
  organization_id: z.string(),
  organization_name: z.string(),
  role: ApiKeyRole,
  label: z.string().nullable().describe("the person's email, else the key's label"),
  key_id: z.string().nullable().describe('the key used (or that opened the session); null for a person'),
  remark_author: z
    .string()
    .describe(
      "the `user_id` of the caller's comments and annotations: the person's email or the key's label, else `key:<key_id>`; only their author deletes a comment",
    ),
  user: z
    .object({ id: z.string(), email: z.string(), name: z.string() })
    .nullable()
    .describe('the person signed in to the console, null for a key'),
  organizations: z
    .array(z.object({ id: z.string(), name: z.string(), role: ApiKeyRole }))
    .describe("the person's organizations, to switch between; the key's alone for a key"),
  must_change_password: z.boolean().describe('a one-time password must be replaced before anything else'),
});
