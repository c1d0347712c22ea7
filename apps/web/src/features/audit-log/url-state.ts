import type { AuditTargetKind } from '../../api/types';
import { isKey, type UrlCodec } from '../../lib/url-codec';
import { KIND_LABELS } from './lib/labels';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The log's filters: one key's changes, one kind of target (null: all). */
export type AuditView = { actor: string | null; kind: AuditTargetKind | null };

export const auditViewCodec: UrlCodec<AuditView> = {
  parse: (params) => {
    const actor = params.get('actor');
    const kind = params.get('kind');
    return {
      actor: actor !== null && UUID.test(actor) ? actor.toLowerCase() : null,
      kind: kind !== null && isKey(KIND_LABELS, kind) ? kind : null,
    };
  },
  write: ({ actor, kind }) => {
    const params = new URLSearchParams();
    if (actor) params.set('actor', actor);
    if (kind) params.set('kind', kind);
    return params;
  },
};
