import { Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { errorMessage } from '../../../api/client';
import { FormModal } from '../../../components/ui/FormModal';
import { useDeploy } from '../api';

type VersionRef = { id: number; name: string; version_number: number };

/** A deployment to point at another version: the one it serves now, the one it will serve, and why. */
export type DeploymentMove = {
  deploymentId: string;
  from: VersionRef;
  to: VersionRef;
  /** Back to the version it served before its last move. */
  rollBack?: boolean;
};

export const versionLabel = (v: Pick<VersionRef, 'name' | 'version_number'>) => `${v.name} v${v.version_number}`;

/**
 * Asks before a deployment moves: every request naming it gets the new version from then on, so the
 * dialog names both versions. Confirming moves it; a refusal stays in the dialog.
 */
export function MoveDeploymentModal({ move, onClose }: { move: DeploymentMove; onClose: () => void }) {
  const deploy = useDeploy();
  const { deploymentId, from, to, rollBack } = move;
  const submit = () =>
    deploy.mutate(
      { prompt_version_id: to.id, deployment_id: deploymentId },
      {
        onSuccess: () => {
          notifications.show({ color: 'teal', message: `${deploymentId} now serves ${versionLabel(to)}.` });
          onClose();
        },
      },
    );
  return (
    <FormModal
      title={rollBack ? `Roll back ${deploymentId}?` : `Move ${deploymentId}?`}
      onClose={onClose}
      onSubmit={submit}
      submit={rollBack ? `Roll back to v${to.version_number}` : `Move to v${to.version_number}`}
      pending={deploy.isPending}
      error={deploy.isError && errorMessage(deploy.error)}
    >
      <Text size="sm">
        <b>{deploymentId}</b> moves from <b>{versionLabel(from)}</b> to <b>{versionLabel(to)}</b>.
      </Text>
      <Text size="sm" c="dimmed">
        Every request that names {deploymentId} gets {versionLabel(to)} as soon as you confirm. The move is recorded in
        its history, and can be rolled back from there.
      </Text>
    </FormModal>
  );
}
