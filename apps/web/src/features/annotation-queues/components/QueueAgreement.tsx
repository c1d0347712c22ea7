import { Button, Group, Modal, Text } from '@mantine/core';
import { useState } from 'react';
import { useAgreement } from '../../../api/criteria';
import type { Criterion } from '../../../api/types';
import { CriterionAgreement, describeFigures } from '../../../components/CriterionAgreement';

/**
 * How far a queue criterion's judge (its evaluation metric) agrees with the people who annotate it, over the
 * project's spans of the last 30 days, in one line; the whole of it (people against each other, the
 * confusion matrix, the spans where they disagree most) one click away.
 */
export function QueueAgreement({ criterion, projectUuid }: { criterion: Criterion; projectUuid: string }) {
  const agreement = useAgreement(criterion.id, 30, projectUuid);
  const [open, setOpen] = useState(false);
  const judge = agreement.data?.judge;
  const line = agreement.isPending
    ? 'measuring…'
    : agreement.isError
      ? 'could not be measured'
      : !judge || judge.n === 0
        ? 'no span scored by both yet'
        : describeFigures(judge);
  return (
    <Group gap={4} wrap="nowrap" align="flex-start">
      <Text size="xs" c="dimmed">
        Judge agrees with people: {line}
      </Text>
      <Button
        size="compact-xs"
        variant="subtle"
        style={{ flexShrink: 0 }}
        onClick={() => setOpen(true)}
        aria-label={`Agreement of ${criterion.name}: details`}
      >
        Details
      </Button>
      {open && (
        <Modal opened onClose={() => setOpen(false)} title={`Agreement of ${criterion.name}`} size="xl">
          <CriterionAgreement criterion={criterion} projectUuid={projectUuid} />
        </Modal>
      )}
    </Group>
  );
}
