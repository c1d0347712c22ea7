import { Anchor, Box, Breadcrumbs, Group, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { Link } from 'react-router';

/** A step of the breadcrumb: a link, or (without `to`) where the page is. */
export type Crumb = { label: ReactNode; to?: string; mono?: boolean };

/**
 * The top of a page below a project: the breadcrumb back up, the title with what stands beside it (a status,
 * an action), and on the right what sums the page up (figures, progress).
 */
export function PageHeading({
  crumbs,
  title,
  beside,
  right,
}: {
  crumbs: Crumb[];
  title: ReactNode;
  beside?: ReactNode;
  right?: ReactNode;
}) {
  return (
    // What stands on the right moves below the title on a narrow screen rather than being squeezed.
    <Group justify="space-between" align="flex-end" gap="xs">
      <div style={{ minWidth: 0 }}>
        <Breadcrumbs fz="sm">
          {crumbs.map((c, i) =>
            c.to ? (
              <Anchor key={i} component={Link} to={c.to}>
                {c.label}
              </Anchor>
            ) : (
              <Text key={i} size="sm" ff={c.mono ? 'monospace' : undefined}>
                {c.label}
              </Text>
            ),
          )}
        </Breadcrumbs>
        <Group gap="sm" mt={2}>
          <Title order={2} style={{ wordBreak: 'break-word' }}>
            {title}
          </Title>
          {beside}
        </Group>
      </div>
      {right && (
        <Box ml="auto" maw="100%" style={{ flexShrink: 0 }}>
          {right}
        </Box>
      )}
    </Group>
  );
}
