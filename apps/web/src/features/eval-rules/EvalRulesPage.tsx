import { useState } from 'react';
import { useParams } from 'react-router';
import { usePermissions } from '../../api/roles';
import type { EvalRule } from '../../api/types';
import { ProjectTablePage } from '../../components/ProjectTablePage';
import { useEvalRules } from './api';
import { BackfillForm } from './components/BackfillForm';
import { RuleForm } from './components/RuleForm';
import { RuleRow } from './components/RuleRow';

/**
 * A project's evaluation rules: metrics run on its new traces once each has settled (online evaluation),
 * on a sample, under a daily judge budget; and backfills of a rule over stored traces.
 */
export default function EvalRulesPage() {
  const { projectUuid = '' } = useParams();
  const rules = useEvalRules(projectUuid);
  const { canWrite } = usePermissions();
  // The rule being edited ('new' while one is created), and the one a backfill is being set up for.
  const [editing, setEditing] = useState<EvalRule | 'new' | null>(null);
  const [backfilling, setBackfilling] = useState<EvalRule | null>(null);

  return (
    <ProjectTablePage
      projectUuid={projectUuid}
      section="eval-rules"
      title="Eval rules"
      noun="rule"
      list={rules}
      onCreate={canWrite ? () => setEditing('new') : null}
      empty="A rule scores this project's new traces automatically once they settle: the metrics you choose, on the share of traces you choose, with a daily limit on what its judges spend."
      label="Evaluation rules"
      columns={['Rule', 'Metrics', 'Scores', 'Runs', 'Judge spend today', 'Latest backfill', 'Enabled']}
      minWidth={960}
      row={(r) => (
        <RuleRow
          key={r.id}
          rule={r}
          canWrite={canWrite}
          onEdit={() => setEditing(r)}
          onBackfill={() => setBackfilling(r)}
        />
      )}
    >
      {editing && (
        <RuleForm
          projectUuid={projectUuid}
          rule={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
        />
      )}
      {backfilling && <BackfillForm rule={backfilling} onClose={() => setBackfilling(null)} />}
    </ProjectTablePage>
  );
}
