import { Center, Paper, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { Logo } from '../../../components/ui/Logo';
import { ThemeToggle } from '../../../components/ui/ThemeToggle';

/** The frame of the pages before the console: the logo, a card titled for what it asks, notes below. */
export function AuthFrame({
  title,
  intro,
  children,
  footer,
}: {
  title: string;
  intro?: ReactNode;
  children: ReactNode;
  footer?: ReactNode;
}) {
  return (
    <Center component="main" mih="100vh" p="md" bg="var(--mantine-color-body)">
      <div style={{ position: 'absolute', top: 16, right: 16 }}>
        <ThemeToggle />
      </div>
      <Stack w={420} maw="100%" gap="lg">
        <Center>
          <Logo size={34} />
        </Center>
        <Paper withBorder shadow="sm" p="xl" radius="lg" aria-labelledby="auth-title" component="section">
          <Stack gap="md">
            <div>
              <Title order={1} size="h3" id="auth-title">
                {title}
              </Title>
              {intro && (
                <Text size="sm" c="dimmed" mt={4}>
                  {intro}
                </Text>
              )}
            </div>
            {children}
          </Stack>
        </Paper>
        {footer}
      </Stack>
    </Center>
  );
}
