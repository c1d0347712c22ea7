import { Alert, Anchor, Button, Center, Code, Paper, PasswordInput, Stack, Text, Title } from '@mantine/core';
import { IconInfoCircle, IconKey } from '@tabler/icons-react';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Navigate, useNavigate, useSearchParams } from 'react-router';
import { ApiError, errorMessage } from '../../api/client';
import { meQueryOptions } from '../../api/me';
import { session, useSession } from '../../api/session';
import { Logo } from '../../components/ui/Logo';
import { ThemeToggle } from '../../components/ui/ThemeToggle';
import { checkKey } from './api';
import { nextPath } from './lib/next-path';

export default function SignInPage() {
  const { apiKey, message } = useSession();
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const next = nextPath(params.get('next'));

  if (apiKey) return <Navigate to={next} replace />;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const candidate = key.trim();
    if (!candidate) return setError('Paste an API key first.');
    setBusy(true);
    setError(null);
    try {
      const me = await checkKey(candidate);
      queryClient.clear();
      queryClient.setQueryData(meQueryOptions(candidate).queryKey, me);
      session.signIn(candidate);
      navigate(next, { replace: true });
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401
          ? 'This API key is not valid on this server. Check that you copied all of it, and that it has not been revoked.'
          : errorMessage(err),
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <Center mih="100vh" p="md" bg="var(--mantine-color-body)">
      <div style={{ position: 'absolute', top: 16, right: 16 }}>
        <ThemeToggle />
      </div>
      <Stack w={420} gap="lg">
        <Center>
          <Logo size={34} />
        </Center>
        <Paper
          withBorder
          shadow="sm"
          p="xl"
          radius="lg"
          component="form"
          onSubmit={submit}
          aria-labelledby="sign-in-title"
        >
          <Stack gap="md">
            <div>
              <Title order={3} id="sign-in-title">
                Sign in
              </Title>
              <Text size="sm" c="dimmed">
                Use an API key of your organization. It is kept in this browser tab only, until you sign out or close
                the tab.
              </Text>
            </div>
            {message && !error && (
              <Alert variant="light" color="blue" icon={<IconInfoCircle size={18} />}>
                {message}
              </Alert>
            )}
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
            <Button type="submit" loading={busy} fullWidth>
              Sign in
            </Button>
          </Stack>
        </Paper>
        <Text size="xs" c="dimmed" ta="center">
          No key yet? On the server, run{' '}
          <Code>npm run apikey -- create --org &lt;name&gt; --role admin --label you@example.com</Code>, or ask an admin
          of your organization. The{' '}
          <Anchor href="/docs" size="xs" underline="always">
            API reference
          </Anchor>{' '}
          is at /docs.
        </Text>
      </Stack>
    </Center>
  );
}
