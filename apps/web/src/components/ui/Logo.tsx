import { Group, Text } from '@mantine/core';

export function Logo({ size = 26 }: { size?: number }) {
  return (
    <Group gap={8} wrap="nowrap">
      <svg width={size} height={size} viewBox="0 0 32 32" aria-hidden="true">
        <rect width="32" height="32" rx="7" fill="var(--mantine-color-indigo-6)" />
        <circle cx="16" cy="16" r="7" fill="none" stroke="#fff" strokeWidth="3" />
        <circle cx="16" cy="16" r="2.5" fill="#fff" />
      </svg>
      <Text fw={700} size="lg" style={{ letterSpacing: -0.3 }}>
        Sightline
      </Text>
    </Group>
  );
}
