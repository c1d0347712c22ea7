import { Button, Text } from '@mantine/core';
import { IconMapOff } from '@tabler/icons-react';
import { Link } from 'react-router';
import { EmptyState } from '../../components/ui/StateViews';

export default function NotFoundPage() {
  return (
    <EmptyState title="This page does not exist" icon={<IconMapOff size={26} />}>
      <Text c="dimmed" size="sm">
        The link may be mistyped, or point to something that was removed.
      </Text>
      <Button component={Link} to="/projects" variant="light">
        Go to the projects
      </Button>
    </EmptyState>
  );
}
