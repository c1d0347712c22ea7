import { Anchor, Box, Breadcrumbs, Group, Tabs, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
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

// The traces page and the dashboard count the same traces: a move between them keeps the search, the
// status, the filters (the parameters the traces page writes them in), experiment runs and the time range
// (the traces page's all time, written as none, reads on the dashboard as its default range).
const FILTERED: readonly Section[] = ['traces', 'dashboard'];
const FILTER_PARAMS = ['q', 'status', 'filter', 'key', 'op', 'value', 'experiments', 'range'];

/** The query of a move from `from` to `to`: the filters when both pages read them, else none. */
function carriedQuery(from: Section, to: string, search: string): string {
  if (!FILTERED.includes(from) || !FILTERED.some((s) => s === to)) return '';
  const current = new URLSearchParams(search);
  const carried = new URLSearchParams();
  for (const name of FILTER_PARAMS) for (const value of current.getAll(name)) carried.append(name, value);
  return carried.size ? `?${carried}` : '';
}

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
  const { search } = useLocation();
  // On a narrow screen the section links tighten, and what the page puts on the right moves below them
  // rather than being squeezed: its actions are read whole.
  return (
    <Group justify="space-between" align="flex-end" gap="xs">
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
            onChange={(v) =>
              v && v !== section && navigate(`/projects/${projectUuid}/${v}${carriedQuery(section, v, search)}`)
            }
            variant="pills"
            radius="md"
            aria-label="Project sections"
          >
            <Tabs.List>
              {SECTIONS.map((s) => (
                <Tabs.Tab key={s.value} value={s.value} py={4} px={{ base: 'xs', lg: 'md' }}>
                  {s.label}
                </Tabs.Tab>
              ))}
            </Tabs.List>
          </Tabs>
        </Group>
      </div>
      {right && (
        <Box ml="auto" maw="100%" style={{ flexShrink: 0 }}>
          {right}
        </Box>
      )}
    </Group>
  );
}
