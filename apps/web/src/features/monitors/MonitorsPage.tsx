import { useState } from 'react';
import { useParams } from 'react-router';
import { usePermissions } from '../../api/roles';
import { ProjectTablePage } from '../../components/ProjectTablePage';
import { useMonitors, type Monitor } from './api';
import { MonitorForm } from './components/MonitorForm';
import { MONITOR_COLUMNS, MonitorRow } from './components/MonitorRow';

/**
 * A project's monitors: a metric of its production traces over a sliding window, read by the workers every
 * interval, that tells its channels when it fires and when it stops; each with its state, its metric's
 * last day against the threshold, and its changes and deliveries.
 */
export default function MonitorsPage() {
  const { projectUuid = '' } = useParams();
  const monitors = useMonitors(projectUuid);
  const { canWrite } = usePermissions();
  // The monitor being edited ('new' while one is created).
  const [editing, setEditing] = useState<Monitor | 'new' | null>(null);

  return (
    <ProjectTablePage
      projectUuid={projectUuid}
      section="monitors"
      title="Monitors"
      noun="monitor"
      list={monitors}
      onCreate={canWrite ? () => setEditing('new') : null}
      empty="A monitor watches a metric of this project's traces (error rate, latency, cost, a score) and tells a webhook or Slack when it crosses a threshold or strays from the usual, and again when it comes back."
      label="Monitors"
      columns={MONITOR_COLUMNS}
      minWidth={960}
      actions
      row={(m) => <MonitorRow key={m.id} monitor={m} canWrite={canWrite} onEdit={() => setEditing(m)} />}
    >
      {editing && (
        <MonitorForm
          projectUuid={projectUuid}
          monitor={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
        />
      )}
    </ProjectTablePage>
  );
}
