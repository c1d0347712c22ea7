import { Anchor, AppShell, Badge, Button, Group, Menu, Text, UnstyledButton, VisuallyHidden } from '@mantine/core';
import {
  IconBuilding,
  IconCheck,
  IconChevronDown,
  IconHistory,
  IconKey,
  IconLogout,
  IconSettings,
  IconUsers,
} from '@tabler/icons-react';
import { notifications } from '@mantine/notifications';
import { Suspense } from 'react';
import { Link, Navigate, NavLink, Outlet, useLocation } from 'react-router';
import { errorMessage } from '../api/client';
import { useMe } from '../api/me';
import { ROLE_COLOR, usePermissions } from '../api/roles';
import { useSession } from '../api/session';
import { Logo } from '../components/ui/Logo';
import { ErrorState, LoadingState } from '../components/ui/StateViews';
import { ThemeToggle } from '../components/ui/ThemeToggle';
import { useSignOut, useSwitchOrganization } from '../features/auth/api';
import { ChangePasswordPage } from '../features/auth/ChangePasswordPage';

/**
 * The signed-in frame of every page: the header (who, organization, theme, sign-out) and the page in its own
 * chunk. Whether there is a session is the server's to say (the cookie is not readable here): until `/me`
 * answers, the page waits; its 401 leads to the sign-in page, which comes back here after.
 */
export function AppLayout() {
  const { status } = useSession();
  const location = useLocation();
  const me = useMe();
  const { isAdmin } = usePermissions();
  if (status === 'signed-out')
    return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;
  // Nothing else is answered until a one-time password is replaced.
  if (me.data?.must_change_password) return <ChangePasswordPage email={me.data.label ?? ''} />;

  return (
    <AppShell header={{ height: 56 }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="lg" wrap="nowrap">
            <Anchor component={Link} to="/projects" underline="never" c="inherit" aria-label="Sightline, projects">
              <Logo />
            </Anchor>
            <Group gap={4} component="nav" aria-label="Main" wrap="nowrap">
              <NavButton to="/projects" label="Projects" />
              <NavButton to="/datasets" label="Datasets" />
              <NavButton to="/prompts" label="Prompts" />
              <NavButton to="/evals" label="Metrics" />
              <NavButton to="/budgets" label="Budgets" />
              {isAdmin && <NavButton to="/settings" label="Settings" />}
            </Group>
          </Group>
          <Group gap="sm" wrap="nowrap">
            <ThemeToggle />
            {me.data && <Account />}
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Main>
        {me.isPending ? (
          <LoadingState label="Checking your session" />
        ) : me.isError ? (
          <ErrorState error={me.error} title="Could not load your account" onRetry={() => me.refetch()} />
        ) : (
          <Suspense fallback={<LoadingState label="Loading the page" />}>
            <Outlet />
          </Suspense>
        )}
      </AppShell.Main>
    </AppShell>
  );
}

function NavButton({ to, label }: { to: string; label: string }) {
  return (
    <NavLink to={to} style={{ textDecoration: 'none' }}>
      {({ isActive }) => (
        <Button
          component="span"
          variant={isActive ? 'light' : 'subtle'}
          color={isActive ? undefined : 'gray'}
          size="compact-md"
          fw={500}
        >
          {label}
        </Button>
      )}
    </NavLink>
  );
}

function Account() {
  const me = useMe().data!;
  const { isAdmin } = usePermissions();
  const signOut = useSignOut();
  const switchTo = useSwitchOrganization();
  const who = me.user ? me.user.name : (me.label ?? 'unlabelled key');
  const others = me.user ? me.organizations : [];
  const choose = (id: string, name: string) =>
    switchTo.mutate(id, {
      onSuccess: () => notifications.show({ color: 'teal', message: `Now working in ${name}` }),
      onError: (err) =>
        notifications.show({ color: 'red', title: `Not switched to ${name}`, message: errorMessage(err) }),
    });
  return (
    <Menu position="bottom-end" width={280} withArrow>
      <Menu.Target>
        {/* Named by what it shows (a screen reader and a voice command use the same words), after "Account:". */}
        <UnstyledButton>
          <VisuallyHidden>Account: </VisuallyHidden>
          <Group gap={8} wrap="nowrap">
            <div style={{ textAlign: 'right', lineHeight: 1.15 }}>
              {/* Narrower below 1200 px, so that the navigation holds on one line at 1024. */}
              <Text size="sm" fw={600} truncate maw={{ base: 120, lg: 220 }} title={me.organization_name}>
                {me.organization_name}
              </Text>
              <Text size="xs" c="dimmed" truncate maw={{ base: 120, lg: 220 }} title={me.label ?? undefined}>
                {who}
              </Text>
            </div>
            <Badge variant="light" color={ROLE_COLOR[me.role]} size="sm">
              {me.role}
            </Badge>
            <IconChevronDown size={14} />
          </Group>
        </UnstyledButton>
      </Menu.Target>
      <Menu.Dropdown>
        {me.user ? (
          <Menu.Label>
            <Text size="sm" fw={600} c="var(--mantine-color-text)" truncate>
              {me.user.name}
            </Text>
            <Text size="xs" truncate>
              {me.user.email}
            </Text>
          </Menu.Label>
        ) : (
          <Menu.Label>Signed in with the key {me.label ?? `${me.key_id?.slice(0, 8)}…`}</Menu.Label>
        )}
        {others.length > 1 && (
          <>
            <Menu.Divider />
            <Menu.Label>Organizations</Menu.Label>
            {others.map((o) => (
              <Menu.Item
                key={o.id}
                leftSection={o.id === me.organization_id ? <IconCheck size={16} /> : <IconBuilding size={16} />}
                rightSection={
                  <Badge variant="light" color={ROLE_COLOR[o.role]} size="xs">
                    {o.role}
                  </Badge>
                }
                aria-current={o.id === me.organization_id || undefined}
                disabled={switchTo.isPending}
                onClick={() => o.id !== me.organization_id && choose(o.id, o.name)}
              >
                {o.name}
              </Menu.Item>
            ))}
          </>
        )}
        <Menu.Divider />
        <Menu.Item component={Link} to="/settings/people" leftSection={<IconUsers size={16} />}>
          People
        </Menu.Item>
        {isAdmin ? (
          <Menu.Item component={Link} to="/settings" leftSection={<IconSettings size={16} />}>
            Settings
          </Menu.Item>
        ) : (
          me.user && (
            <Menu.Item component={Link} to="/settings" leftSection={<IconKey size={16} />}>
              Your API keys
            </Menu.Item>
          )
        )}
        {isAdmin && (
          <Menu.Item component={Link} to="/settings/audit-log" leftSection={<IconHistory size={16} />}>
            Audit log
          </Menu.Item>
        )}
        <Menu.Item color="red" leftSection={<IconLogout size={16} />} onClick={() => signOut.mutate()}>
          Sign out
        </Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}
