import { Button, Stack, Text, Title } from '@mantine/core';
import { IconUserPlus } from '@tabler/icons-react';
import { useState } from 'react';
import { useMe } from '../../api/me';
import { usePermissions } from '../../api/roles';
import type { WhoAmI } from '../../api/types';
import { useUsers } from '../../api/users';
import { PageHeading } from '../../components/ui/PageHeading';
import { LoadingState, QueryPanel } from '../../components/ui/StateViews';
import { useInvitations } from './api';
import { InvitationsTable } from './components/Invitations';
import { InviteModal } from './components/InviteModal';
import { PeopleTable } from './components/PeopleTable';

/** The organization's people: everyone reads who is in it; admins invite, change roles and remove. */
export default function PeoplePage() {
  const me = useMe().data;
  // The console's frame has read `/me` before any page: this is for a page rendered on its own.
  return me ? <People me={me} /> : <LoadingState label="Loading your account" />;
}

function People({ me }: { me: WhoAmI }) {
  const { isAdmin } = usePermissions();
  const people = useUsers();
  const invitations = useInvitations(isAdmin);
  const [inviting, setInviting] = useState(false);

  return (
    <Stack gap="lg" maw={1100} mx="auto">
      <PageHeading
        crumbs={isAdmin ? [{ label: 'Settings', to: '/settings' }, { label: 'People' }] : [{ label: 'People' }]}
        title="People"
        right={
          isAdmin ? (
            <Button leftSection={<IconUserPlus size={16} />} onClick={() => setInviting(true)}>
              Invite someone
            </Button>
          ) : (
            <Text size="sm" c="dimmed" maw={360} ta="right">
              Admins of {me.organization_name} invite people and change their roles.
            </Text>
          )
        }
      />
      <Stack gap="xs">
        <Text size="sm" c="dimmed">
          Who signs in to {me.organization_name}, with their role here.
        </Text>
        <QueryPanel
          query={people}
          loading="Loading the people"
          empty={
            isAdmin
              ? 'No one signs in to this organization yet: invite your colleagues.'
              : 'No one signs in to this organization yet.'
          }
        >
          {(rows) => (
            <PeopleTable
              people={rows}
              meId={me.user?.id ?? null}
              organization={me.organization_name}
              manage={isAdmin}
            />
          )}
        </QueryPanel>
      </Stack>
      {isAdmin && (
        <Stack gap="sm">
          <div>
            <Title order={3}>Pending invitations</Title>
            <Text size="sm" c="dimmed">
              Each link works once, for 7 days after it was made.
            </Text>
          </div>
          <QueryPanel
            query={invitations}
            loading="Loading the invitations"
            empty="No pending invitation. Invite someone: they get a link to choose their password."
          >
            {(rows) => <InvitationsTable invitations={rows} />}
          </QueryPanel>
        </Stack>
      )}
      <InviteModal opened={inviting} onClose={() => setInviting(false)} />
    </Stack>
  );
}
