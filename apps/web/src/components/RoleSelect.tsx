import { Select } from '@mantine/core';
import { ROLE_HELP, ROLES } from '../api/roles';
import type { Role } from '../api/types';

/** A role picker that says, under it, what the chosen role may do (keys and invitations alike). */
export function RoleSelect({ value, onChange }: { value: Role; onChange: (role: Role) => void }) {
  return (
    <Select
      label="Role"
      description={ROLE_HELP[value]}
      data={ROLES}
      value={value}
      allowDeselect={false}
      onChange={(r) => r && onChange(r as Role)}
    />
  );
}
