import { Alert, Anchor, Badge, Button, Divider, Group, PasswordInput, Stack, Text, TextInput } from '@mantine/core';
import { IconAlertTriangle, IconLogin } from '@tabler/icons-react';
import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { API_BASE, ApiError } from '../../api/client';
import type { InvitationPreview } from '../../api/types';
import { ErrorState, LoadingState } from '../../components/ui/StateViews';
import { useAcceptInvitation, useInvitation } from './api';
import { AuthFrame } from './components/AuthFrame';
import { refusal } from './lib/refusal';

const MIN_LENGTH = 12;
const INVALID =
  'This invitation is not valid: it was used, revoked or has expired. Ask the admin who invited you for a new one.';

/** `/accept-invitation?token=`: the link an admin sent; a new account, or an existing one joining. */
export default function AcceptInvitationPage() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const invitation = useInvitation(token);
  const signInLink = (
    <Text size="sm" ta="center">
      Have an account here already?{' '}
      <Anchor component={Link} to="/sign-in">
        Sign in
      </Anchor>
    </Text>
  );

  if (!token || (invitation.error instanceof ApiError && invitation.error.status === 404))
    return (
      <AuthFrame title="Join Sightline" footer={signInLink}>
        <Alert variant="light" color="red" icon={<IconAlertTriangle size={18} />} role="alert">
          {token ? INVALID : 'This link has no invitation in it: open the link exactly as you received it.'}
        </Alert>
      </AuthFrame>
    );
  if (invitation.isPending)
    return (
      <AuthFrame title="Join Sightline">
        <LoadingState label="Reading the invitation" />
      </AuthFrame>
    );
  if (invitation.isError)
    return (
      <AuthFrame title="Join Sightline">
        <ErrorState
          error={invitation.error}
          title="Could not read the invitation"
          onRetry={() => void invitation.refetch()}
        />
      </AuthFrame>
    );
  return <AcceptForm token={token} invitation={invitation.data} />;
}

function AcceptForm({ token, invitation }: { token: string; invitation: InvitationPreview }) {
  const { existing_account: existing, password: withPassword, sso } = invitation;
  const intro = withPassword
    ? existing
      ? 'You have a Sightline account on this server: confirm it is you with its password.'
      : 'You were invited to Sightline. Choose your name and a password to create your account.'
    : sso
      ? `Accept with ${sso.name}, signed in there as ${invitation.email}.`
      : undefined;
  return (
    <AuthFrame title={`Join ${invitation.organization_name}`} intro={intro}>
      <Group gap="xs" wrap="nowrap">
        <Text size="sm" truncate title={invitation.email}>
          {invitation.email}
        </Text>
        <Badge variant="light" size="sm">
          {invitation.role}
        </Badge>
      </Group>
      {withPassword && <PasswordAcceptance token={token} invitation={invitation} />}
      {sso && (
        <>
          {withPassword && <Divider label="or" labelPosition="center" />}
          <Button
            component="a"
            href={`${API_BASE}/auth/oidc/start?${new URLSearchParams({ invitation: token })}`}
            variant={withPassword ? 'default' : 'filled'}
            leftSection={<IconLogin size={16} />}
            fullWidth
          >
            Accept with {sso.name}
          </Button>
        </>
      )}
      {!withPassword && !sso && (
        <Alert variant="light" color="red" icon={<IconAlertTriangle size={18} />} role="alert">
          Your account signs in with single sign-on, which this server no longer offers. Ask the admin who invited you.
        </Alert>
      )}
    </AuthFrame>
  );
}

function PasswordAcceptance({ token, invitation }: { token: string; invitation: InvitationPreview }) {
  const accept = useAcceptInvitation();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const existing = invitation.existing_account;
  const short = !existing && password.length > 0 && password.length < MIN_LENGTH;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    accept.mutate({ token, password, ...(!existing && { name: name.trim() }) });
  };
  return (
    <Stack component="form" gap="sm" onSubmit={submit} aria-label="Accept the invitation">
      <input type="hidden" name="username" autoComplete="username" value={invitation.email} />
      {!existing && (
        <TextInput
          label="Your name"
          description="Shown to your colleagues beside your comments"
          autoComplete="name"
          value={name}
          onChange={(e) => setName(e.currentTarget.value)}
          required
          autoFocus
        />
      )}
      <PasswordInput
        label={existing ? 'Your password' : 'Password'}
        description={existing ? undefined : `At least ${MIN_LENGTH} characters`}
        autoComplete={existing ? 'current-password' : 'new-password'}
        value={password}
        onChange={(e) => setPassword(e.currentTarget.value)}
        error={short ? `At least ${MIN_LENGTH} characters` : undefined}
        required
        autoFocus={existing}
      />
      {accept.isError && (
        <Alert variant="light" color="red" icon={<IconAlertTriangle size={18} />} role="alert">
          {accept.error instanceof ApiError && accept.error.status === 404
            ? INVALID
            : refusal(accept.error, 'Wrong password for this account. Try again, or ask an admin to reset it.')}
        </Alert>
      )}
      <Button type="submit" loading={accept.isPending} disabled={short} fullWidth>
        {existing ? `Join ${invitation.organization_name}` : 'Create my account'}
      </Button>
    </Stack>
  );
}
