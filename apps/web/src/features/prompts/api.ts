import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../api/client';
import type { Deployment, DeploymentHistory, PromptVersion, PromptVersionCreate } from '../../api/types';
import { useInvalidatingMutation } from '../../lib/react-query';

const promptKeys = {
  all: ['prompts'] as const,
  versions: () => [...promptKeys.all, 'versions'] as const,
  deployments: () => [...promptKeys.all, 'deployments'] as const,
  // Under the deployments: a move reads their histories again too.
  history: (deploymentId: string) => [...promptKeys.deployments(), deploymentId, 'history'] as const,
};

const versionsQueryOptions = queryOptions({
  queryKey: promptKeys.versions(),
  queryFn: ({ signal }) => api<PromptVersion[]>('/prompts', { signal }),
});

const deploymentsQueryOptions = queryOptions({
  queryKey: promptKeys.deployments(),
  queryFn: ({ signal }) => api<Deployment[]>('/deployments', { signal }),
});

const historyQueryOptions = (deploymentId: string) =>
  queryOptions({
    queryKey: promptKeys.history(deploymentId),
    queryFn: ({ signal }) =>
      api<DeploymentHistory>(`/deployments/${encodeURIComponent(deploymentId)}/history`, { signal }),
  });

/** Every version of every prompt (versions are immutable: a change is a new version). */
export const usePromptVersions = () => useQuery(versionsQueryOptions);

/** The deployments, each pointing at one version. */
export const useDeployments = () => useQuery(deploymentsQueryOptions);

/** A deployment's moves, newest first: from which version to which, who moved it and when. */
export const useDeploymentHistory = (deploymentId: string) => useQuery(historyQueryOptions(deploymentId));

export const useCreatePromptVersion = () =>
  useInvalidatingMutation(promptKeys.versions(), (body: PromptVersionCreate) =>
    api<PromptVersion>('/prompts', { method: 'POST', body }),
  );

/** Points a deployment (a new one without an id) at a version. */
export const useDeploy = () =>
  useInvalidatingMutation(
    promptKeys.deployments(),
    (body: { prompt_version_id: number; deployment_id?: string | null }) =>
      api<Deployment>('/deployments', { method: 'POST', body }),
  );
