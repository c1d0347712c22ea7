import { z } from 'zod';
import { ApiKeyRole } from './access';
import { Timestamp, Uuid } from './common';

/** What an audit entry is about: the organization's configuration, each kind changed through its own routes. */
export const AuditTargetKind = z.enum([
  'api_key',
  'provider_key',
  'annotation_criterion',
  'annotation_queue',
  'route',
  'eval_metric',
  'eval_rule',
  'monitor',
  'budget',
  'prompt',
  'prompt_deployment',
  'dataset',
  'project',
  'invitation',
  'user',
]);
export type AuditTargetKind = z.infer<typeof AuditTargetKind>;

/**
 * Who made a change: the key, or the person (signed in to the console), with their label (a person's email)
 * and role at the time. A key revoked or a person removed since keeps their entries.
 */
const AuditActor = z.object({
  key_id: z.string().nullable().describe('the key used (or that opened the session); null for a person'),
  user_id: z.string().nullable().describe('the person signed in; null for a key'),
  label: z.string().nullable(),
  role: ApiKeyRole,
});

const AuditEntrySchema = z.object({
  id: z.string(),
  /** When the change's transaction began: the time its own rows were stamped with. */
  at: z.string(),
  actor: AuditActor,
  action: z
    .string()
    .describe(
      'create, update, delete; rename and import (datasets), revoke (API keys, invitations), backfill and cancel_backfill (eval rules), accept (invitations), remove and end_sessions (users)',
    ),
  target: z.object({ kind: AuditTargetKind, id: z.string(), name: z.string().nullable() }),
  before: z
    .unknown()
    .describe('the target before the change (null when it was created); a secret shows as "<secret>", never its value'),
  after: z
    .unknown()
    .describe(
      'the target after the change (null when it was deleted); a secret set or replaced shows as "<changed>", one left as it was as "<secret>"',
    ),
});

const QueryLimit = z
  .string()
  .regex(/^\d{1,9}$/, 'must be a positive integer')
  .transform(Number)
  .pipe(z.number().int().min(1).max(500));

export const AuditLogQuery = z.object({
  before: z
    .union([Uuid.transform((id) => ({ id })), Timestamp.transform((at) => ({ at }))])
    .optional()
    .describe("entries older than this one (an entry's id, as `next` gives) or than this time"),
  limit: QueryLimit.default(50),
  actor: Uuid.optional().describe("one API key's or one person's changes (the key's or the person's id)"),
  target_kind: AuditTargetKind.optional(),
});

export const AuditLogPageSchema = z.object({
  /** Newest first. */
  entries: z.array(AuditEntrySchema),
  next: z.string().nullable().describe('`before` for the next page; null after the last'),
});
