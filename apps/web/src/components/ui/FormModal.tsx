import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import type { ReactNode } from 'react';

/** A dialog's form: its fields, the error of the last attempt, and Cancel / the submit button. */
export function FormModal({
  title,
  onClose,
  onSubmit,
  submit,
  pending,
  error,
  disabled,
  children,
}: {
  title: string;
  onClose: () => void;
  onSubmit: () => void;
  submit: string;
  pending: boolean;
  error: ReactNode;
  disabled?: boolean;
  children: ReactNode;
}) {
  return (
    <Modal opened onClose={onClose} title={title} size="lg">
      <Stack
        component="form"
        onSubmit={(e) => {
          e.preventDefault();
          onSubmit();
        }}
      >
        {children}
        {error && (
          <Text size="sm" c="red" role="alert" component="div">
            {error}
          </Text>
        )}
        {/* On a short screen a long form scrolls in the dialog: its actions stay in view, at its foot. */}
        <Group justify="flex-end" pos="sticky" bottom={0} py="xs" bg="var(--mantine-color-body)" style={{ zIndex: 1 }}>
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" loading={pending} disabled={disabled}>
            {submit}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
