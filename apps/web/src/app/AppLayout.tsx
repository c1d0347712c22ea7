import { Anchor, AppShell, Badge, Button, Group, Menu, Text, UnstyledButton, VisuallyHidden } from '@mantine/core';
import { IconChevronDown, IconHistory, IconLogout, IconSettings } from '@tabler/icons-react';
import { useQueryClient } from '@tanstack/react-query';
import { Suspense } from 'react';
import { Link, Navigate, NavLink, Outlet, useLocation } from 'react-router';
import { useMe } from '../api/me';
import { usePermissions } from '../api/roles';
import { session, useSession } from '../api/session';
import { Logo } from '../components/ui/Logo';
import { ErrorState, LoadingState } from '../components/ui/StateViews';
import { ThemeToggle } from '../components/ui/ThemeToggle';

const ROLE_COLOR = { admin: 'indigo', member: 'teal', viewer: 'gray' } as const;

/** The signed-in frame of every page: the header (who, theme, sign-out) and the page in its own chunk. */
export function AppLayout() {
  const { apiKey } = useSession();
  const location = useLocation();
  const me = useMe();
  const { isAdmin } = usePermissions();
  if (!apiKey)
    return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;

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
          <LoadingState label="Checking your API key" />
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
  const queryClient = useQueryClient();
  const signOut = () => {
    session.signOut('You signed out.');
    queryClient.clear();
  };
  return (
    <Menu position="bottom-end" width={260} withArrow>
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
                {me.label ?? 'unlabelled key'}
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
        <Menu.Label>Signed in with key {me.key_id.slice(0, 8)}…</Menu.Label>
        {isAdmin && (
          <Menu.Item component={Link} to="/settings" leftSection={<IconSettings size={16} />}>
            Settings
          </Menu.Item>
        )}
        {isAdmin && (
          <Menu.Item component={Link} to="/settings/audit-log" leftSection={<IconHistory size={16} />}>
            Audit log
          </Menu.Item>
        )}
        <Menu.Item color="red" leftSection={<IconLogout size={16} />} onClick={signOut}>
          Sign out
        </Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}
