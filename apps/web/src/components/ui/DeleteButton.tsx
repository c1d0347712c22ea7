import { Button } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconTrash } from '@tabler/icons-react';
import { errorMessage } from '../../api/client';

/** A small red "Delete" that asks `question` first, and tells of a refusal in a notification. */
export function DeleteButton({
  label,
  question,
  onDelete,
}: {
  /** What the button does, for screen readers ("Delete the criterion helpfulness"). */
  label: string;
  question: string;
  onDelete: () => Promise<unknown>;
}) {
  return (
    <Button
      size="xs"
      variant="subtle"
      color="red"
      leftSection={<IconTrash size={14} />}
      aria-label={label}
      onClick={() =>
        window.confirm(question) &&
        onDelete().catch((err) => notifications.show({ color: 'red', message: errorMessage(err) }))
      }
    >
      Delete
    </Button>
  );
}
