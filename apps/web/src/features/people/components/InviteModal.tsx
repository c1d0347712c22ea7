import { Alert, Button, Code, Group, Modal, Stack, Text, TextInput } from '@mantine/core';
import { IconMail, IconMailOff } from '@tabler/icons-react';
import { useState, type FormEvent } from 'react';
import { errorMessage } from '../../../api/client';
import type { InvitationCreated, Role } from '../../../api/types';
import { CopyIcon } from '../../../components/ui/CopyField';
import { useInvite } from '../api';
import { RoleSelect } from '../../../components/RoleSelect';

/** Invites someone by email and role; then shows the link (this once) and whether it was mailed. */
export function InviteModal({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const invite = useInvite();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [created, setCreated] = useState<InvitationCreated | null>(null);
  const close = () => {
    setCreated(null);
    setEmail('');
    invite.reset();
    onClose();
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    invite.mutate({ email: email.trim(), role }, { onSuccess: setCreated });
  };
  return (
    <Modal
      opened={opened}
      onClose={close}
      title={created ? `Invitation for ${created.email}` : 'Invite someone'}
      size="lg"
      closeOnClickOutside={!created}
    >
      {created ? (
        <Stack>
          {created.mailed ? (
            <Alert color="teal" variant="light" icon={<IconMail size={18} />}>
              Mailed to {created.email}. You can also send them the link yourself.
            </Alert>
          ) : (
            <Alert color="yellow" variant="light" icon={<IconMailOff size={18} />}>
              Not mailed: this server sends no email (SMTP_URL is not set). Send them the link yourself.
            </Alert>
          )}
          <Group gap={4} wrap="nowrap">
            <Code
              block
              style={{ flex: 1, wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}
              data-testid="invitation-link"
            >
              {created.link}
            </Code>
            <CopyIcon value={created.link} label="Copy the link" />
          </Group>
          <Text size="sm" c="dimmed">
            Shown this once. It works once, for 7 days, and makes {created.email}{' '}
            {created.role === 'admin' ? 'an' : 'a'} {created.role} of this organization.
          </Text>
          <Group justify="flex-end">
            <Button onClick={close}>Done</Button>
          </Group>
        </Stack>
      ) : (
        <Stack component="form" onSubmit={submit}>
          <TextInput
            label="Email"
            type="email"
            placeholder="colleague@example.com"
            value={email}
            onChange={(e) => setEmail(e.currentTarget.value)}
            required
            data-autofocus
          />
          <RoleSelect value={role} onChange={setRole} />
          {invite.isError && (
            <Alert color="red" variant="light" role="alert">
              {errorMessage(invite.error)}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button type="submit" loading={invite.isPending} disabled={!email.trim()}>
              Invite
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
