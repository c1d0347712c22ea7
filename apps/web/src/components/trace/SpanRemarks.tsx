import {
  ActionIcon,
  Badge,
  Button,
  Group,
  NumberInput,
  Paper,
  Select,
  Stack,
  Text,
  Textarea,
  TextInput,
  Tooltip,
} from '@mantine/core';
import { IconTrash } from '@tabler/icons-react';
import { useState, type ReactNode } from 'react';
import { errorMessage } from '../../api/client';
import { useCriteria } from '../../api/criteria';
import { useMe } from '../../api/me';
import { useRemarks, type Remarks } from '../../api/remarks';
import { usePermissions } from '../../api/roles';
import { usePeopleNames } from '../../api/users';
import type { Criterion, Span, SpanComment } from '../../api/types';
import { formatAuthor, formatScore } from '../../lib/format';
import { ErrorState, LoadingState } from '../ui/StateViews';
import { Timestamp } from '../ui/Timestamp';
import { Section } from './Section';

type Annotations = NonNullable<Span['annotations']>;

/** The span's comments and annotations: everyone's, read-only for viewers; a writer adds and removes their own. */
export function SpanRemarks({ span }: { span: Span }) {
  // The author the API records for this key (its label, else the key): the remarks by it are the ones it may
  // delete and update.
  const me = useMe().data?.remark_author ?? null;
  const { canWrite } = usePermissions();
  const remarks = useRemarks(span.trace_id);
  const comments = (span.comments ?? []) as SpanComment[];
  return (
    <Stack gap="md">
      <Section title={`Comments (${comments.length})`}>
        <Stack gap={6}>
          {comments.length === 0 && (
            <Text size="sm" c="dimmed">
              No comments on this span yet.
            </Text>
          )}
          {comments.map((c, i) => (
            <Paper key={c.id ?? i} withBorder p="xs" radius="sm" data-testid="comment">
              <Group gap={6} justify="space-between" wrap="nowrap">
                <Group gap={6}>
                  <Author userId={c.user_id} />
                  <Timestamp value={c.created_at} size="xs" c="dimmed" />
                </Group>
                {canWrite && c.id && me != null && c.user_id === me && (
                  <Tooltip label="Delete this comment">
                    <ActionIcon
                      size="sm"
                      variant="subtle"
                      color="red"
                      aria-label="Delete the comment"
                      loading={remarks.deleteComment.isPending && remarks.deleteComment.variables === c.id}
                      onClick={() => remarks.deleteComment.mutate(c.id!)}
                    >
                      <IconTrash size={14} />
                    </ActionIcon>
                  </Tooltip>
                )}
              </Group>
              <Text size="sm" style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
                {c.comment}
              </Text>
            </Paper>
          ))}
          {remarks.deleteComment.error && <MutationError error={remarks.deleteComment.error} />}
          {canWrite && <CommentBox remarks={remarks} />}
        </Stack>
      </Section>
      <Section title="Annotations">
        <SpanAnnotations span={span} remarks={remarks} />
      </Section>
    </Stack>
  );
}

/**
 * A span's annotations by criterion: everyone's, and for a writer a form to set or remove their own. With
 * `criterionIds`, only those criteria, in that order (an annotation queue's). With `activeId`, that criterion
 * is marked as the one the keys choose for (its options numbered), and focusing or clicking a criterion
 * calls `onActivate` with it.
 */
export function SpanAnnotations({
  span,
  remarks,
  criterionIds,
  activeId,
  onActivate,
  empty = 'No annotation criteria yet. Admins define them in Settings.',
}: {
  span: Span;
  remarks: Remarks;
  criterionIds?: readonly string[];
  activeId?: string | null;
  onActivate?: (criterionId: string) => void;
  /** What to say when there is no criterion to show. */
  empty?: ReactNode;
}) {
  const me = useMe().data?.remark_author ?? null;
  const { canWrite } = usePermissions();
  const criteria = useCriteria();
  if (criteria.isPending) return <LoadingState label="Loading the criteria" />;
  if (criteria.error)
    return <ErrorState error={criteria.error} title="Could not load the criteria" onRetry={() => criteria.refetch()} />;
  const shown = criterionIds
    ? criterionIds.flatMap((id) => criteria.data.find((c) => c.id === id) ?? [])
    : criteria.data;
  if (shown.length === 0)
    return (
      <Text size="sm" c="dimmed">
        {empty}
      </Text>
    );
  return (
    <Stack gap="xs">
      {shown.map((c) => (
        <CriterionRow
          key={c.id}
          criterion={c}
          annotations={span.annotations?.[c.id] ?? {}}
          me={me}
          canWrite={canWrite}
          remarks={remarks}
          active={activeId === undefined ? undefined : activeId === c.id}
          onActivate={onActivate && (() => onActivate(c.id))}
        />
      ))}
    </Stack>
  );
}

function CommentBox({ remarks }: { remarks: Remarks }) {
  const [text, setText] = useState('');
  const add = remarks.addComment;
  const submit = () => add.mutate(text.trim(), { onSuccess: () => setText('') });
  return (
    <Stack gap={6}>
      <Textarea
        aria-label="New comment"
        placeholder="Add a comment…"
        autosize
        minRows={2}
        maxRows={8}
        value={text}
        onChange={(e) => setText(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.metaKey || e.ctrlKey) && text.trim()) submit();
        }}
      />
      <Group justify="space-between">
        <Text size="xs" c="dimmed">
          Ctrl+Enter to send
        </Text>
        <Button size="xs" onClick={submit} disabled={!text.trim()} loading={add.isPending}>
          Comment
        </Button>
      </Group>
      {add.error && <MutationError error={add.error} />}
    </Stack>
  );
}

/** The criterion's kind and range, or its options: numbered from 1 when the number keys choose them. */
function describe(c: Criterion, numbered = false): string {
  if (c.kind === 'score') {
    if (c.min != null && c.max != null) return `score ${c.min}–${c.max}`;
    if (c.min != null) return `score ≥ ${c.min}`;
    if (c.max != null) return `score ≤ ${c.max}`;
    return 'score';
  }
  if (!c.options?.length) return 'text';
  return (numbered ? c.options.map((o, i) => (i < 9 ? `${i + 1} ${o}` : o)) : c.options).join(' · ');
}

function CriterionRow({
  criterion: c,
  annotations,
  me,
  canWrite,
  remarks,
  active,
  onActivate,
}: {
  criterion: Criterion;
  annotations: Annotations[string];
  me: string | null;
  canWrite: boolean;
  remarks: Remarks;
  /** Undefined where no criterion is the keys' (the trace page). */
  active?: boolean;
  onActivate?: () => void;
}) {
  const entries = Object.entries(annotations);
  const mine = me != null ? annotations[me] : undefined;
  return (
    <Paper
      withBorder
      p="xs"
      radius="sm"
      aria-label={`Criterion ${c.name}`}
      aria-current={active || undefined}
      onFocus={onActivate}
      onClick={onActivate}
      style={
        active
          ? {
              borderColor: 'var(--mantine-primary-color-filled)',
              boxShadow: '0 0 0 1px var(--mantine-primary-color-filled)',
            }
          : undefined
      }
    >
      <Group gap={6} mb={4}>
        <Text size="sm" fw={600}>
          {c.name}
        </Text>
        <Badge size="xs" variant="light" color="gray">
          {describe(c, active !== undefined)}
        </Badge>
      </Group>
      {c.description && (
        <Text size="xs" c="dimmed" mb={4}>
          {c.description}
        </Text>
      )}
      {entries.length === 0 ? (
        <Text size="xs" c="dimmed">
          Not annotated yet.
        </Text>
      ) : (
        <Stack gap={2}>
          {entries.map(([user, a]) => (
            <Group key={user} gap={6}>
              <Author userId={user} />
              <Text size="sm" ff="monospace">
                {a.score != null ? formatScore(a.score) : (a.value ?? '–')}
              </Text>
              <Timestamp value={a.created_at} size="xs" c="dimmed" />
            </Group>
          ))}
        </Stack>
      )}
      {canWrite && (
        // Drawn again when the annotation changes (a key chose an option): the inputs show what is saved.
        <AnnotateForm key={`${mine?.score ?? ''}|${mine?.value ?? ''}`} criterion={c} mine={mine} remarks={remarks} />
      )}
    </Paper>
  );
}

function AnnotateForm({
  criterion: c,
  mine,
  remarks,
}: {
  criterion: Criterion;
  mine: Annotations[string][string] | undefined;
  remarks: Remarks;
}) {
  const [score, setScore] = useState<string | number>(mine?.score ?? '');
  const [value, setValue] = useState<string>(mine?.value ?? '');
  const { annotate, unannotate } = remarks;
  const pending = annotate.isPending && annotate.variables?.criterionId === c.id;
  const ready = c.kind === 'score' ? typeof score === 'number' : value.trim() !== '';
  const submit = () =>
    annotate.mutate({
      criterionId: c.id,
      body: c.kind === 'score' ? { score: Number(score) } : { value: value.trim() },
    });
  const label = `Your ${c.name}`;
  let input: ReactNode;
  if (c.kind === 'score')
    input = (
      <NumberInput
        size="xs"
        w={120}
        aria-label={label}
        placeholder="Score"
        min={c.min ?? undefined}
        max={c.max ?? undefined}
        value={score}
        onChange={setScore}
      />
    );
  else if (c.options?.length)
    input = (
      <Select
        size="xs"
        w={180}
        aria-label={label}
        placeholder="Pick one"
        data={c.options}
        value={value || null}
        onChange={(v) => setValue(v ?? '')}
      />
    );
  else
    input = (
      <TextInput
        size="xs"
        w={220}
        aria-label={label}
        placeholder="Value"
        value={value}
        onChange={(e) => setValue(e.currentTarget.value)}
      />
    );
  const error = (annotate.variables?.criterionId === c.id && annotate.error) || (mine && unannotate.error);
  return (
    <Stack gap={4} mt={6}>
      <Group gap={6} align="center">
        {input}
        <Button size="xs" variant="light" onClick={submit} disabled={!ready} loading={pending}>
          {mine ? 'Update' : 'Annotate'}
        </Button>
        {mine && (
          <Button
            size="xs"
            variant="subtle"
            color="red"
            aria-label={`Remove mine, the ${c.name} annotation`}
            loading={unannotate.isPending && unannotate.variables === c.id}
            onClick={() =>
              unannotate.mutate(c.id, {
                onSuccess: () => {
                  setScore('');
                  setValue('');
                },
              })
            }
          >
            Remove mine
          </Button>
        )}
      </Group>
      {error && <MutationError error={error} />}
    </Stack>
  );
}

/**
 * Who wrote a remark: the email (or key label) it is signed with, and the person's name beside it when
 * that is a person of the organization.
 */
function Author({ userId }: { userId: string }) {
  const name = usePeopleNames()(userId);
  return (
    <Text size="xs" fw={600} title={userId}>
      {name ?? formatAuthor(userId)}
      {name && (
        <Text span size="xs" fw={400} c="dimmed" ml={4}>
          {userId}
        </Text>
      )}
    </Text>
  );
}

function MutationError({ error }: { error: unknown }) {
  return (
    <Text size="xs" c="red" role="alert">
      {errorMessage(error)}
    </Text>
  );
}
