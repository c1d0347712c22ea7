import type { Role } from './types';
import { useMe } from './me';

/** What the signed-in key may do; write controls are hidden from viewers, settings from non-admins. */
export function usePermissions() {
  const role = useMe().data?.role;
  return { role, canWrite: role === 'admin' || role === 'member', isAdmin: role === 'admin' };
}

/** What each role may do, as the role pickers say it. */
export const ROLE_HELP: Record<Role, string> = {
  admin: 'Admin: everything, including people, keys and provider keys',
  member: 'Member: reads and writes traces, datasets, experiments',
  viewer: 'Viewer: reads only',
};

export const ROLES = Object.keys(ROLE_HELP) as Role[];

/** A role's badge colour, wherever a role shows. */
export const ROLE_COLOR: Record<Role, string> = { admin: 'indigo', member: 'teal', viewer: 'gray' };
