import type { WhoAmI } from '../../api/types';

/** The key the guide makes: the person's own member key, called this in Settings → API keys. */
export const FIRST_TRACE_KEY = { role: 'member', label: 'first trace', service: false } as const;

/**
 * Whether the caller may make a key that writes traces: a member's key, made by an admin or a member
 * signed in as a person (a key's session makes keys only as an admin key; a viewer's key cannot write).
 */
export const canMakeWritingKey = (me: Pick<WhoAmI, 'role' | 'user'>) =>
  me.role === 'admin' || (me.role === 'member' && me.user !== null);
