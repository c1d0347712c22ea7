import { Anchor, Breadcrumbs, Group, Tabs, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { Link, useNavigate } from 'react-router';
import { useProjects } from '../api/projects';

const SECTIONS = [
  { value: 'traces', label: 'Traces' },
  { value: 'dashboard', label: 'Dashboard' },
  { value: 'sessions', label: 'Sessions & users' },
  { value: 'experiments', label: 'Experiments' },
  { value: 'eval-rules', label: 'Eval rules' },
  { value: 'annotation-queues', label: 'Annotation queues' },
  { value: 'monitors', label: 'Monitors' },
] as const;
export type Section = (typeof SECTIONS)[number]['value'];

/** A project's pages: the breadcrumb, the title, and the links between its sections. */
export function ProjectHeader({
  projectUuid,
  section,
  title,
  right,
}: {
  projectUuid: string;
  section: Section;
  title: string;
  right?: ReactNode;
}) {
  const project = useProjects().data?.find((p) => p.uuid === projectUuid);
  const navigate = useNavigate();
  return (
    <Group justify="space-between" align="flex-end" wrap="nowrap">
      <div>
        <Breadcrumbs fz="sm">
          <Anchor component={Link} to="/projects">
            Projects
          </Anchor>
          <Text size="sm">{project?.name ?? 'Project'}</Text>
        </Breadcrumbs>
        <Group gap="lg" align="flex-end">
          <Title order={2}>{title}</Title>
          <Tabs
            value={section}
            onChange={(v) => v && v !== section && navigate(`/projects/${projectUuid}/${v}`)}
            variant="pills"
            radius="md"
            aria-label="Project sections"
          >
            <Tabs.List>
              {SECTIONS.map((s) => (
                <Tabs.Tab key={s.value} value={s.value} py={4}>
                  {s.label}
                </Tabs.Tab>
              ))}
            </Tabs.List>
          </Tabs>
        </Group>
      </div>
      {right}
    </Group>
  );
}
