import { useState } from 'react';
import { useParams } from 'react-router';
import { useQueues, type AnnotationQueue } from '../../api/annotation-queues';
import { useCriteria } from '../../api/criteria';
import { usePermissions } from '../../api/roles';
import { ProjectTablePage } from '../../components/ProjectTablePage';
import { AddTracesForm } from './components/AddTracesForm';
import { QueueForm } from './components/QueueForm';
import { QueueRow } from './components/QueueRow';

/**
 * A project's annotation queues: traces brought to reviewers one at a time, with the criteria they fill in;
 * each queue's progress and reviewers, and for a writer the way to create, fill, edit and review them.
 */
export default function AnnotationQueuesPage() {
  const { projectUuid = '' } = useParams();
  const queues = useQueues(projectUuid);
  const criteria = useCriteria();
  const { canWrite } = usePermissions();
  // The queue being edited ('new' while one is created), and the one traces are being added to.
  const [editing, setEditing] = useState<AnnotationQueue | 'new' | null>(null);
  const [adding, setAdding] = useState<AnnotationQueue | null>(null);

  return (
    <ProjectTablePage
      projectUuid={projectUuid}
      section="annotation-queues"
      title="Annotation queues"
      noun="queue"
      list={queues}
      onCreate={canWrite ? () => setEditing('new') : null}
      empty="A queue brings traces to reviewers one at a time: fill it with a sample of the project's traces, and each reviewer annotates the next one by the queue's criteria, with its instructions in view."
      label="Annotation queues"
      columns={['Queue', 'Criteria', 'Progress', 'Reviewers']}
      minWidth={960}
      row={(q) => (
        <QueueRow
          key={q.id}
          queue={q}
          criteria={criteria.data}
          canWrite={canWrite}
          onEdit={() => setEditing(q)}
          onAddTraces={() => setAdding(q)}
        />
      )}
    >
      {editing && (
        <QueueForm
          projectUuid={projectUuid}
          queue={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
        />
      )}
      {adding && <AddTracesForm queue={adding} onClose={() => setAdding(null)} />}
    </ProjectTablePage>
  );
}
