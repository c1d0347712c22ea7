import { TextInput } from '@mantine/core';
import type { ReactNode } from 'react';
import { otherErrors } from '../../lib/field-errors';
import { FormModal } from './FormModal';

/**
 * The dialog that creates a thing of a project's (a rule, a queue, a monitor) or edits one (`editing`: its
 * name): its title and button say which, and the API's refusals that no input shows (their paths do not
 * match `placed`) are shown under the fields.
 */
export function EditFormModal({
  noun,
  editing,
  onClose,
  onSubmit,
  save,
  placed,
  disabled,
  children,
}: {
  noun: string;
  editing: string | null;
  onClose: () => void;
  onSubmit: () => void;
  save: { isPending: boolean; error: unknown };
  placed: RegExp;
  disabled: boolean;
  children: ReactNode;
}) {
  return (
    <FormModal
      title={editing === null ? `Create ${noun}` : `Edit the ${noun} ${editing}`}
      onClose={onClose}
      onSubmit={onSubmit}
      submit={editing === null ? `Create ${noun}` : 'Save'}
      pending={save.isPending}
      error={otherErrors(save.error, placed)}
      disabled={disabled}
    >
      {children}
    </FormModal>
  );
}

/** The required name of what the dialog makes, focused when it opens. */
export function NameInput({
  value,
  onChange,
  error,
}: {
  value: string;
  onChange: (name: string) => void;
  error?: string;
}) {
  return (
    <TextInput
      label="Name"
      required
      value={value}
      onChange={(e) => onChange(e.currentTarget.value)}
      error={error}
      data-autofocus
    />
  );
}
