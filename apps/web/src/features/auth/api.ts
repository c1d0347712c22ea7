import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api } from '../../api/client';
import { meKeys } from '../../api/me';
import { session } from '../../api/session';
import type { Acceptance, BootstrapAdmin, InvitationPreview, Login, SignedIn, SignInOptions } from '../../api/types';

const authKeys = {
  options: ['auth', 'options'] as const,
  invitation: (token: string) => ['auth', 'invitation', token] as const,
};

// Before a session, a 401 is the form's to show (a wrong password), not a signed-out session's.
const signingIn = { signingIn: true } as const;

/** How this server lets people sign in: a password, single sign-on, the first admin's form. */
export const useSignInOptions = () =>
  useQuery(
    queryOptions({
      queryKey: authKeys.options,
      queryFn: ({ signal }) => api<SignInOptions>('/auth/options', { signal, ...signingIn }),
      staleTime: Infinity,
    }),
  );

/**
 * Each way in answers the same (the person, the organization, the role) and sets the cookie: the answers of
 * whoever was signed in before are dropped, and the console goes on to `next`.
 */
function useSignInWith<V>(post: (body: V) => Promise<SignedIn>, next: string) {
  const client = useQueryClient();
  const navigate = useNavigate();
  return useMutation({
    mutationFn: post,
    onSuccess: () => {
      client.clear();
      session.signedIn();
      navigate(next, { replace: true });
    },
  });
}

export const useLogin = (next: string) =>
  useSignInWith((body: Login) => api<SignedIn>('/auth/login', { method: 'POST', body, ...signingIn }), next);

export const useKeySignIn = (next: string) =>
  useSignInWith(
    (apiKey: string) => api<SignedIn>('/auth/key', { method: 'POST', body: { api_key: apiKey }, ...signingIn }),
    next,
  );

export const useBootstrap = (next: string) =>
  useSignInWith(
    (body: BootstrapAdmin) => api<SignedIn>('/auth/bootstrap', { method: 'POST', body, ...signingIn }),
    next,
  );

export const useAcceptInvitation = () =>
  useSignInWith(
    (body: Acceptance) => api<SignedIn>('/auth/accept-invitation', { method: 'POST', body, ...signingIn }),
    '/projects',
  );

/** What an invitation link offers (404 once it is used, revoked or expired). */
export const useInvitation = (token: string) =>
  useQuery(
    queryOptions({
      queryKey: authKeys.invitation(token),
      queryFn: ({ signal }) =>
        api<InvitationPreview>(`/auth/invitation?${new URLSearchParams({ token })}`, { signal, ...signingIn }),
      enabled: !!token,
    }),
  );

/** A new password for the person signed in; `/me` is read again (a one-time password's flag goes). */
export const useChangePassword = () => {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { current_password: string; new_password: string }) =>
      api<unknown>('/auth/password', { method: 'POST', body }),
    onSuccess: () => client.invalidateQueries({ queryKey: meKeys.all }),
  });
};

/** Ends the session on the server (its cookie with it), then here, whatever the server said. */
export const useSignOut = () => {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => api<unknown>('/auth/logout', { method: 'POST', ...signingIn }),
    onSettled: () => {
      session.signOut('You signed out.');
      client.clear();
    },
  });
};

/** Works in another of the person's organizations: every answer of the one before is read again. */
export const useSwitchOrganization = () => {
  const client = useQueryClient();
  const navigate = useNavigate();
  return useMutation({
    mutationFn: (organizationId: string) =>
      api<unknown>('/auth/organization', { method: 'POST', body: { organization_id: organizationId } }),
    onSuccess: async () => {
      // The page's project or dataset belongs to the organization left: start from the projects.
      navigate('/projects');
      await client.resetQueries();
    },
  });
};
