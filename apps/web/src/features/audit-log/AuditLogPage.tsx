import { Button, Group, Select, Stack, Text } from '@mantine/core';
import { IconHistory } from '@tabler/icons-react';
import { useApiKeys } from '../../api/api-keys';
import { useMe } from '../../api/me';
import { usePermissions } from '../../api/roles';
import { useUsers } from '../../api/users';
import type { AuditTargetKind } from '../../api/types';
import { PageHeading } from '../../components/ui/PageHeading';
import { EmptyState, ErrorState, LoadingState } from '../../components/ui/StateViews';
import { useUrlState } from '../../hooks/use-url-state';
import { useAuditLog } from './api';
import { AuditTable } from './components/AuditTable';
import { KIND_LABELS } from './lib/labels';
import { auditViewCodec } from './url-state';

const KIND_OPTIONS = Object.entries(KIND_LABELS)
  .map(([value, label]) => ({ value, label }))
  .sort((a, b) => a.label.localeCompare(b.label));

/** Who changed what in the organization's configuration (admins only), filtered by key and kind of target. */
export default function AuditLogPage() {
  const me = useMe().data;
  const { isAdmin } = usePermissions();
  if (!isAdmin || !me) {
    return (
      <EmptyState title="The audit log is for admins">
        <Text size="sm" c="dimmed">
          Your role is {me?.role}. Ask an admin of {me?.organization_name} what changed.
        </Text>
      </EmptyState>
    );
  }
  return <AuditLog />;
}

function AuditLog() {
  const [view, setView] = useUrlState(auditViewCodec);
  const log = useAuditLog(view);
  const keys = useApiKeys();
  const people = useUsers();
  const filtered = !!(view.actor || view.kind);
  const actorOptions = [
    ...(people.data ?? []).map((p) => ({ value: p.id, label: `${p.name} <${p.email}> (${p.role})` })),
    ...(keys.data ?? []).map((k) => ({
      value: k.id,
      label: `${k.label ?? `unlabelled key ${k.api_key}`} (${k.role})`,
    })),
  ];
  // A key revoked or a person removed since (or not listed yet) still names their changes.
  if (view.actor && !actorOptions.some((o) => o.value === view.actor))
    actorOptions.push({ value: view.actor, label: `${view.actor.slice(0, 8)}…` });
  const entries = log.data?.pages.flatMap((p) => p.entries) ?? [];
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = log;

  return (
    <Stack gap="sm" h="calc(100vh - 56px - 2 * var(--mantine-spacing-md))">
      <PageHeading
        crumbs={[{ label: 'Settings', to: '/settings' }, { label: 'Audit log' }]}
        title="Audit log"
        right={
          <Text size="sm" c="dimmed" maw={420} ta="right">
            Changes made through the API to keys, provider keys, criteria, queues, routes, metrics, rules, monitors,
            budgets, prompts, datasets and projects. Secrets show only as set or changed.
          </Text>
        }
      />
      <Group gap="xs" wrap="wrap">
        <Select
          label="Actor"
          placeholder="Anyone"
          w={300}
          searchable
          clearable
          data={actorOptions}
          value={view.actor ?? null}
          onChange={(actor) => setView({ actor })}
          nothingFoundMessage="No such person or key"
        />
        <Select
          label="Kind of target"
          placeholder="Any kind"
          w={240}
          clearable
          data={KIND_OPTIONS}
          value={view.kind ?? null}
          onChange={(kind) => setView({ kind: kind as AuditTargetKind | null })}
        />
        {filtered && (
          <Button variant="subtle" mt={24} onClick={() => setView({ actor: null, kind: null })}>
            Clear filters
          </Button>
        )}
      </Group>
      {log.isPending ? (
        <LoadingState label="Loading the audit log" />
      ) : log.isError ? (
        <ErrorState error={log.error} title="Could not load the audit log" onRetry={() => log.refetch()} />
      ) : entries.length === 0 ? (
        <EmptyState
          title={filtered ? 'No changes match these filters' : 'No changes recorded yet'}
          icon={<IconHistory size={26} />}
        >
          <Text size="sm" c="dimmed">
            {filtered
              ? 'Clear a filter to see more of the log.'
              : 'Each change made through the API to the organization’s configuration appears here, with who made it and what it changed.'}
          </Text>
        </EmptyState>
      ) : (
        <AuditTable
          entries={entries}
          more={isFetchingNextPage ? 'loading' : hasNextPage ? 'yes' : 'no'}
          onMore={fetchNextPage}
          onActor={view.actor ? null : (actor) => setView({ actor })}
        />
      )}
    </Stack>
  );
}
