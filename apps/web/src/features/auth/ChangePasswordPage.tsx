import { Alert, Anchor, Button, PasswordInput, Stack } from '@mantine/core';
import { IconAlertTriangle } from '@tabler/icons-react';
import { useState, type FormEvent } from 'react';
import { useChangePassword, useSignOut } from './api';
import { AuthFrame } from './components/AuthFrame';
import { refusal } from './lib/refusal';

const MIN_LENGTH = 12;

/**
 * A one-time password (given by an admin, or printed by `npm run user`) is replaced before anything else:
 * the server answers nothing but `/me` and this change until it is.
 */
export function ChangePasswordPage({ email }: { email: string }) {
  const change = useChangePassword();
  const signOut = useSignOut();
  const [current, setCurrent] = useState('');
  const [fresh, setFresh] = useState('');
  const [again, setAgain] = useState('');
  const short = fresh.length > 0 && fresh.length < MIN_LENGTH;
  const mismatch = again.length > 0 && again !== fresh;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (short || mismatch || fresh === current) return;
    change.mutate({ current_password: current, new_password: fresh });
  };
  return (
    <AuthFrame
      title="Choose your password"
      intro={`You signed in as ${email} with a one-time password. Choose your own to go on.`}
    >
      <Stack component="form" gap="sm" onSubmit={submit} aria-label="Choose your password">
        {/* For password managers: whose password this is. */}
        <input type="hidden" name="username" autoComplete="username" value={email} />
        <PasswordInput
          label="One-time password"
          autoComplete="current-password"
          value={current}
          onChange={(e) => setCurrent(e.currentTarget.value)}
          required
          autoFocus
        />
        <PasswordInput
          label="New password"
          description={`At least ${MIN_LENGTH} characters`}
          autoComplete="new-password"
          value={fresh}
          onChange={(e) => setFresh(e.currentTarget.value)}
          error={
            short
              ? `At least ${MIN_LENGTH} characters`
              : fresh && fresh === current
                ? 'Choose a password other than the one-time one'
                : undefined
          }
          required
        />
        <PasswordInput
          label="New password, again"
          autoComplete="new-password"
          value={again}
          onChange={(e) => setAgain(e.currentTarget.value)}
          error={mismatch ? 'The two passwords differ' : undefined}
          required
        />
        {change.isError && (
          <Alert variant="light" color="red" icon={<IconAlertTriangle size={18} />} role="alert">
            {refusal(change.error, 'Your session has ended: sign in again.')}
          </Alert>
        )}
        <Button type="submit" loading={change.isPending} disabled={short || mismatch || !again} fullWidth>
          Save and continue
        </Button>
        <Anchor component="button" type="button" size="sm" ta="center" onClick={() => signOut.mutate()}>
          Sign out
        </Anchor>
      </Stack>
    </AuthFrame>
  );
}
