import { Badge, Group, Title } from '@mantine/core';
import type { SkeletonSpan } from '../../api/types';
import { KIND_COLORS } from '../../theme';
import { StatusBadge } from '../TraceCells';

/** A span's kind and status, and its name as a heading (the trace page's span pane, a review's). */
export function SpanHeading({ skeleton, order }: { skeleton: SkeletonSpan; order: 3 | 4 }) {
  const kind = skeleton.kind ?? 'span';
  return (
    <>
      <Group gap={6}>
        <Badge variant="light" color={KIND_COLORS[kind] ?? 'gray'} radius="sm">
          {kind}
        </Badge>
        <StatusBadge status={skeleton.status} />
      </Group>
      <Title order={order} mt={4} style={{ wordBreak: 'break-word' }}>
        {skeleton.trace_name || 'unnamed span'}
      </Title>
    </>
  );
}
