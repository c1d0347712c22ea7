import { Anchor, Badge, Group } from '@mantine/core';
import { IconFlask } from '@tabler/icons-react';
import { Link } from 'react-router';
import { useExperiment } from '../../../api/experiments';

/** The comparison a trace was opened from: its experiments (the baseline among them). */
export type CompareContext = { ids: string; baseline: string | null };

/**
 * For a trace an experiment run logged (`experimentUuid`, its root's): a link to that experiment, and,
 * when the trace was opened from a comparison, to its case there. Nothing for production traffic.
 */
export function ExperimentLinks({
  projectUuid,
  rootId,
  experimentUuid: uuid,
  compare,
}: {
  projectUuid: string;
  rootId: string;
  experimentUuid: string | null;
  compare: CompareContext | null;
}) {
  const experiment = useExperiment(uuid);
  if (!uuid) return null;
  const name = experiment.data ? `${experiment.data.name} · ${experiment.data.run_name}` : 'its experiment';
  const back =
    compare &&
    new URLSearchParams({
      ids: compare.ids,
      ...(compare.baseline && { baseline: compare.baseline }),
      page: '1',
      trace: rootId,
    });
  return (
    <Group gap="xs" wrap="nowrap" role="group" aria-label="Experiment run">
      <Badge variant="light" color="grape" leftSection={<IconFlask size={12} />} tt="none">
        Experiment run
      </Badge>
      <Anchor component={Link} to={`/projects/${projectUuid}/experiments/${uuid}`} size="sm">
        {name}
      </Anchor>
      {back && (
        <Anchor component={Link} to={`/projects/${projectUuid}/experiments/compare?${back}`} size="sm">
          Its case in the comparison
        </Anchor>
      )}
    </Group>
  );
}
