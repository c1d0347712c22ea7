import { Anchor, MultiSelect, Textarea } from '@mantine/core';
import { useState } from 'react';
import { Link } from 'react-router';
import { errorMessage } from '../../../api/client';
import { useCriteria } from '../../../api/criteria';
import { EditFormModal, NameInput } from '../../../components/ui/EditFormModal';
import type { AnnotationQueue } from '../../../api/annotation-queues';
import { useCreateQueue, useUpdateQueue } from '../api';
import { fieldErrors, listErrors } from '../../../lib/field-errors';
import { draftOf, fieldsOf, NEW_QUEUE, type QueueDraft } from '../lib/queues';

/** The fields the form shows the API's refusals beside; a refusal of any other is shown under the form. */
const PLACED = /^(name|criterion_ids|instructions)(\.|$)/;

/** Creates a queue in the project (`queue` null) or edits one: its name, the criteria reviewers fill in, instructions. */
export function QueueForm({
  projectUuid,
  queue,
  onClose,
}: {
  projectUuid: string;
  queue: AnnotationQueue | null;
  onClose: () => void;
}) {
  const [d, setD] = useState<QueueDraft>(() => (queue ? draftOf(queue) : NEW_QUEUE));
  const create = useCreateQueue();
  const update = useUpdateQueue();
  const save = queue ? update : create;
  const criteria = useCriteria();
  const set = (change: Partial<QueueDraft>) => setD((prev) => ({ ...prev, ...change }));

  const errors = fieldErrors(save.error);
  const nameOf = (id: string | undefined) =>
    criteria.data?.find((c) => c.id === id)?.name ?? (id ? `criterion ${id.slice(0, 8)}` : 'a criterion');
  const submit = () => {
    if (queue) update.mutate({ id: queue.id, ...fieldsOf(d) }, { onSuccess: onClose });
    else create.mutate({ ...fieldsOf(d), project_uuid: projectUuid }, { onSuccess: onClose });
  };

  // A criterion deleted since it was chosen keeps a place in the list, so that it can be taken out.
  const options = [
    ...(criteria.data ?? []).map((c) => ({ value: c.id, label: c.name })),
    ...d.criterionIds
      .filter((id) => criteria.data && !criteria.data.some((c) => c.id === id))
      .map((id) => ({ value: id, label: `deleted criterion ${id.slice(0, 8)}` })),
  ];
  return (
    <EditFormModal
      noun="queue"
      editing={queue?.name ?? null}
      onClose={onClose}
      onSubmit={submit}
      save={save}
      placed={PLACED}
      disabled={!d.name.trim()}
    >
      <NameInput value={d.name} onChange={(name) => set({ name })} error={errors.name} />
      <MultiSelect
        label="Criteria"
        description={
          criteria.isError ? (
            `The criteria could not load: ${errorMessage(criteria.error)}`
          ) : criteria.data?.length === 0 ? (
            <>
              No annotation criteria yet: admins define them in{' '}
              <Anchor component={Link} to="/settings" inherit>
                Settings
              </Anchor>
              .
            </>
          ) : (
            'What reviewers annotate each trace by, in this order.'
          )
        }
        placeholder={
          criteria.isPending ? 'Loading the criteria…' : d.criterionIds.length ? undefined : 'Choose criteria'
        }
        data={options}
        value={d.criterionIds}
        onChange={(criterionIds) => set({ criterionIds })}
        searchable
        nothingFoundMessage="No criterion of that name"
        error={listErrors(errors, 'criterion_ids', (i) => nameOf(d.criterionIds[i]))}
      />
      <Textarea
        label="Instructions"
        description="Shown to reviewers above each item: what to look for, how to decide."
        autosize
        minRows={3}
        maxRows={12}
        value={d.instructions}
        onChange={(e) => set({ instructions: e.currentTarget.value })}
        error={errors.instructions}
      />
    </EditFormModal>
  );
}
