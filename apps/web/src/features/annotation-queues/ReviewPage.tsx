import { Box, Button, Paper, Spoiler, Stack, Text } from '@mantine/core';
import { IconChecks } from '@tabler/icons-react';
import type { ReactNode } from 'react';
import { Link, useParams } from 'react-router';
import { ApiError } from '../../api/client';
import { useMe } from '../../api/me';
import { useProjects } from '../../api/projects';
import { usePermissions } from '../../api/roles';
import { Section } from '../../components/trace/Section';
import { PageHeading } from '../../components/ui/PageHeading';
import { EmptyState, ErrorState, LoadingState } from '../../components/ui/StateViews';
import { useNextItem, useQueue } from './api';
import { KeyHelp } from './components/KeyHelp';
import { QueueProgress } from './components/QueueProgress';
import { ReviewItem } from './components/ReviewItem';

/**
 * A reviewer's page of a queue: the next item is leased to them (and renewed while they work), shown with
 * the queue's instructions and progress; they annotate it by the queue's criteria, then complete or skip it
 * and the next one comes, until none is left. Keys do it all.
 */
export default function ReviewPage() {
  const { projectUuid = '', queueId = '' } = useParams();
  const project = useProjects().data?.find((p) => p.uuid === projectUuid);
  const queue = useQueue(queueId);
  const me = useMe();
  const { canWrite } = usePermissions();
  const next = useNextItem(queueId, canWrite);
  const back = `/projects/${projectUuid}/annotation-queues`;
  const backButton = (
    <Button component={Link} to={back} variant="light">
      Back to the queues
    </Button>
  );

  let body: ReactNode;
  if (queue.isPending || me.isPending) body = <LoadingState label="Loading the queue" />;
  else if (queue.isError)
    body =
      queue.error instanceof ApiError && queue.error.status === 404 ? (
        <EmptyState title="This queue does not exist">
          <Text size="sm" c="dimmed">
            It may have been deleted. Check the link, or go back to the project&apos;s queues.
          </Text>
          {backButton}
        </EmptyState>
      ) : (
        <ErrorState error={queue.error} title="Could not load the queue" onRetry={() => queue.refetch()} />
      );
  else if (me.isError)
    body = <ErrorState error={me.error} title="Could not load your key's role" onRetry={() => me.refetch()} />;
  else if (!canWrite)
    body = (
      <EmptyState title="Reviewing takes a member's or an admin's key">
        <Text size="sm" c="dimmed">
          A viewer sees the queue&apos;s progress, but cannot take its items.
        </Text>
        {backButton}
      </EmptyState>
    );
  else if (next.isPending) body = <LoadingState label="Taking the next item" />;
  else if (next.isError)
    body = <ErrorState error={next.error} title="Could not take the next item" onRetry={() => next.refetch()} />;
  else if (next.data === null)
    body = (
      <EmptyState title="All done — nothing left to review in this queue" icon={<IconChecks size={26} />}>
        <Text size="sm" c="dimmed">
          Every item is done or skipped, or held by another reviewer. Add traces to the queue to review more.
        </Text>
        {backButton}
      </EmptyState>
    );
  else
    body = (
      <ReviewItem
        // A new lease is a new item on screen: the span, the criterion and the errors start over.
        key={`${next.data.item_id}:${next.data.lease_expires_at}`}
        queue={queue.data}
        item={next.data}
        projectUuid={projectUuid}
        onTakeNext={() => next.refetch()}
        taking={next.isFetching}
      />
    );

  return (
    <Stack gap="sm">
      <PageHeading
        crumbs={[
          { label: 'Projects', to: '/projects' },
          { label: project?.name ?? 'Project', to: `/projects/${projectUuid}/traces` },
          { label: 'Annotation queues', to: back },
        ]}
        title={queue.data ? `Review: ${queue.data.name}` : 'Review'}
        right={
          queue.data && (
            <Box w={280}>
              <QueueProgress queue={queue.data} />
            </Box>
          )
        }
      />
      {queue.data?.instructions && (
        <Paper withBorder radius="md" px="md" py="xs" role="region" aria-label="Instructions">
          <Section title="Instructions">
            <Spoiler maxHeight={72} showLabel="Show all" hideLabel="Show less">
              <Text size="sm" style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
                {queue.data.instructions}
              </Text>
            </Spoiler>
          </Section>
        </Paper>
      )}
      {canWrite && next.data && <KeyHelp />}
      {body}
    </Stack>
  );
}
