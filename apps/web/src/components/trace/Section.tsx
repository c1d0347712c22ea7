import type { ReactNode } from 'react';
import { Text } from '@mantine/core';

/** A titled part of a span's details: a small upper-case title above its content. */
export function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600} mb={4} style={{ letterSpacing: 0.3 }}>
        {title}
      </Text>
      {children}
    </div>
  );
}
