import { Alert, Anchor, Button, Code, Divider, PasswordInput, Stack, Text, TextInput } from '@mantine/core';
import { IconAlertTriangle, IconInfoCircle, IconKey, IconLogin } from '@tabler/icons-react';
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Navigate, useSearchParams } from 'react-router';
import { API_BASE } from '../../api/client';
import { meQueryOptions } from '../../api/me';
import { useSession } from '../../api/session';
import type { SignInOptions } from '../../api/types';
import { ErrorState, LoadingState } from '../../components/ui/StateViews';
import { useBootstrap, useKeySignIn, useLogin, useSignInOptions } from './api';
import { AuthFrame } from './components/AuthFrame';
import { nextPath } from './lib/next-path';
import { refusal } from './lib/refusal';

type Method = 'password' | 'key' | 'bootstrap';

export default function SignInPage() {
  const { status, message } = useSession();
  const [params] = useSearchParams();
  const next = nextPath(params.get('next'));
  // A page opened afresh may have a session already (its cookie is not readable here): the server says.
  const me = useQuery({ ...meQueryOptions, enabled: status === 'unknown' });
  const options = useSignInOptions();

  if (status === 'signed-in') return <Navigate to={next} replace />;
  if ((status === 'unknown' && me.isPending) || options.isPending)
    return (
      <AuthFrame title="Sign in">
        <LoadingState label="Checking how to sign in" />
      </AuthFrame>
    );
  if (options.isError)
    return (
      <AuthFrame title="Sign in">
        <ErrorState error={options.error} title="Could not reach the server" onRetry={() => void options.refetch()} />
      </AuthFrame>
    );
  // What the server sent back here: a single sign-on refused (a domain not allowed, a cancelled login).
  return <SignInForms options={options.data} next={next} notice={message} error={params.get('error')} />;
}

function SignInForms({
  options,
  next,
  notice,
  error,
}: {
  options: SignInOptions;
  next: string;
  notice: string | null;
  error: string | null;
}) {
  // `password` is a person's way in: their password, or single sign-on, whichever the server takes.
  const personal = options.password || !!options.sso;
  const [method, setMethod] = useState<Method>(options.bootstrap ? 'bootstrap' : personal ? 'password' : 'key');
  const title = { password: 'Sign in', key: 'Sign in with a key', bootstrap: 'Create the first admin' }[method];
  const intro = {
    password: 'Welcome back to Sightline.',
    key: "A program's key, or a new server's first key. The browser keeps no key: it gets a session instead.",
    bootstrap: 'This server has no one yet. Create its first admin, with the email it was started with.',
  }[method];
  return (
    <AuthFrame
      title={title}
      intro={intro}
      footer={
        method === 'key' && (
          <Text size="xs" c="dimmed" ta="center">
            No key yet? On the server, run{' '}
            <Code>npm run apikey -- create --org &lt;name&gt; --role admin --label you@example.com</Code>, or ask an
            admin of your organization. The{' '}
            <Anchor href="/docs" size="xs" underline="always">
              API reference
            </Anchor>{' '}
            is at /docs.
          </Text>
        )
      }
    >
      {error && (
        <Alert variant="light" color="red" icon={<IconAlertTriangle size={18} />} title="Not signed in" role="alert">
          {error}
        </Alert>
      )}
      {notice && !error && (
        <Alert variant="light" color="blue" icon={<IconInfoCircle size={18} />}>
          {notice}
        </Alert>
      )}
      {method === 'bootstrap' && <BootstrapForm next={next} />}
      {method === 'password' && options.password && <PasswordForm next={next} />}
      {method === 'key' && <KeyForm next={next} />}
      {options.sso && method === 'password' && (
        <>
          {options.password && <Divider label="or" labelPosition="center" />}
          <Button
            component="a"
            href={`${API_BASE}/auth/oidc/start`}
            variant="default"
            leftSection={<IconLogin size={16} />}
            fullWidth
          >
            Sign in with {options.sso.name}
          </Button>
        </>
      )}
      <Stack gap={4} align="center">
        {method !== 'key' && (
          <Anchor component="button" type="button" size="sm" onClick={() => setMethod('key')}>
            Use an API key instead
          </Anchor>
        )}
        {method !== 'password' && personal && (
          <Anchor component="button" type="button" size="sm" onClick={() => setMethod('password')}>
            {options.password ? 'Use your email and password instead' : `Use ${options.sso!.name} instead`}
          </Anchor>
        )}
        {method !== 'bootstrap' && options.bootstrap && (
          <Anchor component="button" type="button" size="sm" onClick={() => setMethod('bootstrap')}>
            Create the first admin
          </Anchor>
        )}
      </Stack>
    </AuthFrame>
  );
}

function PasswordForm({ next }: { next: string }) {
  const login = useLogin(next);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    login.mutate({ email: email.trim(), password });
  };
  return (
    <Stack component="form" gap="sm" onSubmit={submit} aria-label="Sign in with your email">
      <TextInput
        label="Email"
        type="email"
        autoComplete="username"
        value={email}
        onChange={(e) => setEmail(e.currentTarget.value)}
        required
        data-autofocus
        autoFocus
      />
      <PasswordInput
        label="Password"
        autoComplete="current-password"
        value={password}
        onChange={(e) => setPassword(e.currentTarget.value)}
        required
      />
      {login.isError && (
        <Alert variant="light" color="red" icon={<IconAlertTriangle size={18} />} role="alert">
          {refusal(
            login.error,
            'Wrong email or password. Check both; if you forgot your password, ask an admin of your organization.',
          )}
        </Alert>
      )}
      <Button type="submit" loading={login.isPending} fullWidth>
        Sign in
      </Button>
    </Stack>
  );
}

function KeyForm({ next }: { next: string }) {
  const signIn = useKeySignIn(next);
  const [key, setKey] = useState('');
  const [missing, setMissing] = useState(false);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const candidate = key.trim();
    setMissing(!candidate);
    if (candidate) signIn.mutate(candidate);
  };
  const error = missing
    ? 'Paste an API key first.'
    : signIn.isError
      ? refusal(
          signIn.error,
          'This API key is not valid on this server. Check that you copied all of it, and that it has not been revoked.',
        )
      : null;
  return (
    // Named by the frame's title: a name with "API key" in it would be the input's too, to a search by label.
    <Stack component="form" gap="sm" onSubmit={submit}>
      <PasswordInput
        label="API key"
        placeholder="sl_…"
        leftSection={<IconKey size={16} />}
        value={key}
        onChange={(e) => setKey(e.currentTarget.value)}
        error={error}
        autoFocus
        autoComplete="off"
        data-autofocus
      />
      <Button type="submit" loading={signIn.isPending} fullWidth>
        Sign in
      </Button>
    </Stack>
  );
}

function BootstrapForm({ next }: { next: string }) {
  const bootstrap = useBootstrap(next);
  const [form, setForm] = useState({ email: '', name: '', password: '', organization_name: '' });
  const field = (name: keyof typeof form) => ({
    value: form[name],
    onChange: (e: { currentTarget: { value: string } }) => setForm({ ...form, [name]: e.currentTarget.value }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    bootstrap.mutate({
      email: form.email.trim(),
      name: form.name.trim(),
      password: form.password,
      ...(form.organization_name.trim() && { organization_name: form.organization_name.trim() }),
    });
  };
  const short = form.password.length > 0 && form.password.length < 12;
  return (
    <Stack component="form" gap="sm" onSubmit={submit} aria-label="Create the first admin">
      <TextInput
        label="Email"
        description="The one the server was started with (BOOTSTRAP_ADMIN_EMAIL)"
        type="email"
        autoComplete="username"
        required
        autoFocus
        {...field('email')}
      />
      <TextInput label="Name" autoComplete="name" required {...field('name')} />
      <PasswordInput
        label="Password"
        description="At least 12 characters"
        autoComplete="new-password"
        required
        error={short ? 'At least 12 characters' : undefined}
        {...field('password')}
      />
      <TextInput
        label="Organization"
        placeholder="default"
        autoComplete="organization"
        {...field('organization_name')}
      />
      {bootstrap.isError && (
        <Alert variant="light" color="red" icon={<IconAlertTriangle size={18} />} role="alert">
          {refusal(bootstrap.error, 'The server refused: sign in instead.')}
        </Alert>
      )}
      <Button type="submit" loading={bootstrap.isPending} disabled={short} fullWidth>
        Create the admin and sign in
      </Button>
    </Stack>
  );
}
