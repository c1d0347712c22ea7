import { Select } from '@mantine/core';
import { ROLE_HELP, ROLES } from '../api/roles';
import type { Role } from '../api/types';

/**
 * A role picker that says, under it, what the chosen role may do (keys and invitations alike); `highest`
 * leaves out the roles above it, which the server would refuse.
 */
export function RoleSelect({
  value,
  onChange,
  highest = 'admin',
}: {
  value: Role;
  onChange: (role: Role) => void;
  highest?: Role;
}) {
  return (
    <Select
      label="Role"
      description={ROLE_HELP[value]}
      data={ROLES.slice(ROLES.indexOf(highest))}
      value={value}
      allowDeselect={false}
      onChange={(r) => r && onChange(r as Role)}
    />
  );
}
