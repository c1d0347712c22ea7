import type { AuditEntry, AuditTargetKind } from '../../../api/types';

/** What each kind of target is called, in the filter and the table (the log's own kinds: the API's list). */
export const KIND_LABELS: Record<AuditTargetKind, string> = {
  api_key: 'API key',
  provider_key: 'Provider key',
  annotation_criterion: 'Annotation criterion',
  annotation_queue: 'Annotation queue',
  route: 'Route',
  eval_metric: 'Eval metric',
  eval_rule: 'Eval rule',
  monitor: 'Monitor',
  budget: 'Budget',
  prompt: 'Prompt version',
  prompt_deployment: 'Prompt deployment',
  dataset: 'Dataset',
  project: 'Project',
  invitation: 'Invitation',
  user: 'Person',
};

const ACTIONS: Record<string, { label: string; color: string }> = {
  create: { label: 'created', color: 'teal' },
  update: { label: 'changed', color: 'blue' },
  delete: { label: 'deleted', color: 'red' },
  revoke: { label: 'revoked', color: 'red' },
  rename: { label: 'renamed', color: 'blue' },
  import: { label: 'imported into', color: 'grape' },
  backfill: { label: 'started a backfill of', color: 'grape' },
  cancel_backfill: { label: 'cancelled a backfill of', color: 'orange' },
  accept: { label: 'accepted', color: 'teal' },
  remove: { label: 'removed', color: 'red' },
  end_sessions: { label: 'ended the sessions of', color: 'orange' },
};

/** An action as a sentence's verb, with a colour for its badge: the API's word when it is new to the console. */
export const actionOf = (action: string) => ACTIONS[action] ?? { label: action.replaceAll('_', ' '), color: 'gray' };

/** Who made a change: the person's email or the key's label, else the key's id's first characters. */
export const actorName = (actor: AuditEntry['actor']) => actor.label ?? `key ${(actor.key_id ?? '').slice(0, 8)}…`;

/** The id the log's `actor` filter takes for a change's maker: the person's, else the key's. */
export const actorId = (actor: AuditEntry['actor']) => (actor.user_id ?? actor.key_id)!;
