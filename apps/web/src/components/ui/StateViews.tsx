import { Alert, Button, Center, Loader, Paper, Stack, Text, ThemeIcon, Title } from '@mantine/core';
import type { UseQueryResult } from '@tanstack/react-query';
import { IconAlertTriangle, IconInbox } from '@tabler/icons-react';
import type { ReactNode } from 'react';
import { errorMessage } from '../../api/client';

export function LoadingState({ label }: { label: string }) {
  return (
    <Center py="xl" role="status" aria-live="polite">
      <Stack align="center" gap="xs">
        <Loader size="sm" />
        <Text size="sm" c="dimmed">
          {label}…
        </Text>
      </Stack>
    </Center>
  );
}

/** An error with what to do about it, and a retry when retrying can help. */
export function ErrorState({
  error,
  title = 'Something went wrong',
  onRetry,
}: {
  error: unknown;
  title?: string;
  onRetry?: () => void;
}) {
  return (
    <Alert variant="light" color="red" title={title} icon={<IconAlertTriangle size={18} />} role="alert">
      <Stack gap="xs" align="flex-start">
        <Text size="sm">{errorMessage(error)}</Text>
        {onRetry && (
          <Button size="xs" variant="light" color="red" onClick={onRetry}>
            Retry
          </Button>
        )}
      </Stack>
    </Alert>
  );
}

export function EmptyState({
  title,
  children,
  icon,
  width = 560,
}: {
  title: string;
  children?: ReactNode;
  icon?: ReactNode;
  width?: number;
}) {
  return (
    <Center py={48}>
      <Stack align="center" gap="sm" maw={width} w="100%" ta="center">
        <ThemeIcon size={48} radius="xl" variant="light" color="gray">
          {icon ?? <IconInbox size={26} />}
        </ThemeIcon>
        <Title order={4}>{title}</Title>
        {children}
      </Stack>
    </Center>
  );
}

/**
 * A bordered panel for a query's list: loading, an error with a retry, `empty` when the list is empty (if
 * given), else `children` with the rows.
 */
export function QueryPanel<T>({
  query,
  loading,
  empty,
  children,
}: {
  query: UseQueryResult<T[]>;
  loading: string;
  empty?: ReactNode;
  children: (rows: T[]) => ReactNode;
}) {
  return (
    <Paper withBorder radius="md">
      {query.isPending ? (
        <LoadingState label={loading} />
      ) : query.isError ? (
        <Stack p="md">
          <ErrorState error={query.error} onRetry={() => query.refetch()} />
        </Stack>
      ) : query.data.length === 0 && empty ? (
        // A sentence is set as one; a view of its own (an EmptyState) brings its own paragraphs.
        typeof empty === 'string' ? (
          <Text size="sm" c="dimmed" p="md">
            {empty}
          </Text>
        ) : (
          empty
        )
      ) : (
        children(query.data)
      )}
    </Paper>
  );
}
