import { useMe } from './me';

/** What the signed-in key may do; write controls are hidden from viewers, settings from non-admins. */
export function usePermissions() {
  const role = useMe().data?.role;
  return { role, canWrite: role === 'admin' || role === 'member', isAdmin: role === 'admin' };
}
