import { Badge, Group, Text, Tooltip, VisuallyHidden } from '@mantine/core';
import type { ReactNode } from 'react';
import { formatScore } from '../lib/format';

export function StatusBadge({ status, error }: { status: string | null; error?: string | null }) {
  if (!status)
    return (
      <Text span size="sm" c="dimmed">
        –
      </Text>
    );
  const badge = (
    <Badge variant="light" color={status === 'error' ? 'red' : status === 'success' ? 'teal' : 'gray'} size="sm">
      {status}
    </Badge>
  );
  return error ? (
    <Tooltip label={error.slice(0, 300)} multiline maw={420} withArrow>
      {badge}
    </Tooltip>
  ) : (
    badge
  );
}

/** At most `max` chips, the rest counted (a row stays one line high). */
export function Chips({ items, max = 2, color = 'gray' }: { items: string[]; max?: number; color?: string }) {
  if (!items.length)
    return (
      <Text span size="sm" c="dimmed">
        –
      </Text>
    );
  return (
    <Group gap={4} wrap="nowrap">
      {items.slice(0, max).map((t, i) => (
        <Badge
          key={`${t}-${i}`}
          variant="light"
          color={color}
          size="sm"
          tt="none"
          fw={500}
          maw={150}
          style={{ flexShrink: 1, minWidth: 0 }}
          title={t}
        >
          {t}
        </Badge>
      ))}
      {items.length > max && (
        <Tooltip label={items.slice(max).join(', ')} multiline maw={320}>
          <Badge variant="outline" color="gray" size="sm">
            +{items.length - max}
          </Badge>
        </Tooltip>
      )}
    </Group>
  );
}

export const scoreChips = (scores: { name: string; score: number | null }[]) =>
  scores.map((s) => `${s.name} ${formatScore(s.score)}`);

/**
 * A figure (tokens, cost) marked "≈" when it was counted from the span's text with the model's tokenizer
 * because no usage was reported; a screen reader hears "estimated".
 */
export function Estimated({ estimated, children }: { estimated: boolean | undefined; children: ReactNode }) {
  if (!estimated) return children;
  return (
    <Tooltip label="Estimated: counted from the text with the model's tokenizer, as no usage was reported" withArrow>
      <span>
        <span aria-hidden="true">≈ </span>
        <VisuallyHidden>estimated </VisuallyHidden>
        {children}
      </span>
    </Tooltip>
  );
}
