import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../api/client';
import { userKeys } from '../../api/users';
import type { Invitation, InvitationCreated, Role } from '../../api/types';
import { useInvalidatingMutation } from '../../lib/react-query';

const invitationKeys = { all: ['invitations'] as const };

/** The invitations not yet accepted (admins only); their links were shown once, when made. */
export const useInvitations = (enabled: boolean) =>
  useQuery(
    queryOptions({
      queryKey: invitationKeys.all,
      queryFn: ({ signal }) => api<Invitation[]>('/invitations', { signal }),
      enabled,
    }),
  );

export const useInvite = () =>
  useInvalidatingMutation(invitationKeys.all, (body: { email: string; role: Role }) =>
    api<InvitationCreated>('/invitations', { method: 'POST', body }),
  );

export const useRevokeInvitation = () =>
  useInvalidatingMutation(invitationKeys.all, (id: string) => api<unknown>(`/invitations/${id}`, { method: 'DELETE' }));

export const useChangeRole = () =>
  useInvalidatingMutation(userKeys.all, ({ id, role }: { id: string; role: Role }) =>
    api<unknown>(`/users/${id}`, { method: 'PATCH', body: { role } }),
  );

export const useRemovePerson = () =>
  useInvalidatingMutation(userKeys.all, (id: string) => api<unknown>(`/users/${id}`, { method: 'DELETE' }));

/** Ends every session of the person in this organization: they sign in again (their keys keep working). */
export const useEndSessions = () =>
  useInvalidatingMutation(userKeys.all, (id: string) => api<unknown>(`/users/${id}/sessions`, { method: 'DELETE' }));
