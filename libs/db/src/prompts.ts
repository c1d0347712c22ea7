import type { LlmConfiguration, PromptVersionCreate } from '@sightline/schemas';
import { transaction, type Sql } from './client';

export type PromptVersion = PromptVersionCreate & { id: number; version_number: number; created_at: Date };
export type Deployment = { deployment_id: string; prompt_version: PromptVersion; updated_at: Date };

const VERSION_COLUMNS =
  'v.id, v.name, v.version_number, v.messages, v.model, v.provider, v.model_params, v.functions, v.function_call, v.created_at';

/** Adds the next version of a named prompt; the advisory lock numbers concurrent creations without gaps or clashes. */
export async function createPromptVersion(
  sql: Sql,
  organizationId: string,
  p: PromptVersionCreate,
): Promise<PromptVersion> {
  return transaction(sql, async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtextextended(${`prompt/${organizationId}/${p.name}`}, 0))`;
    const [row] = await tx<PromptVersion[]>`
      insert into prompt_versions (organization_id, name, version_number, messages, model, provider, model_params, functions, function_call)
      select ${organizationId}, ${p.name}, coalesce(max(version_number), 0) + 1, ${tx.json(p.messages as never)}, ${p.model}, ${p.provider},
             ${tx.json((p.model_params ?? {}) as never)}, ${p.functions ? tx.json(p.functions as never) : null}, ${p.function_call ?? null}
      from prompt_versions where organization_id = ${organizationId} and name = ${p.name}
      returning id, name, version_number, messages, model, provider, model_params, functions, function_call, created_at`;
    return row;
  });
}

export function listPromptVersions(sql: Sql, organizationId: string, name?: string | null) {
  return sql<PromptVersion[]>`
    select ${sql.unsafe(VERSION_COLUMNS)} from prompt_versions v
    where v.organization_id = ${organizationId} ${name ? sql`and v.name = ${name}` : sql``}
    order by v.name, v.version_number desc`;
}

/** Points a deployment id at a version of the organization (creating the deployment), or null if the version is unknown. */
export async function deployPromptVersion(
  sql: Sql,
  organizationId: string,
  deploymentId: string,
  versionId: number,
): Promise<Deployment | null> {
  const [version] =
    await sql`select 1 from prompt_versions where organization_id = ${organizationId} and id = ${versionId}`;
  if (!version) return null;
  await sql`
    insert into deployments (organization_id, deployment_id, prompt_version_id) values (${organizationId}, ${deploymentId}, ${versionId})
    on conflict (organization_id, deployment_id) do update set prompt_version_id = excluded.prompt_version_id, updated_at = now()`;
  return findDeployment(sql, organizationId, deploymentId);
}

export async function findDeployment(
  sql: Sql,
  organizationId: string,
  deploymentId: string,
): Promise<Deployment | null> {
  const [row] = await sql`
    select d.deployment_id, d.updated_at, ${sql.unsafe(VERSION_COLUMNS)}
    from deployments d join prompt_versions v on v.id = d.prompt_version_id
    where d.organization_id = ${organizationId} and d.deployment_id = ${deploymentId}`;
  if (!row) return null;
  const { deployment_id, updated_at, ...version } = row;
  return { deployment_id, updated_at, prompt_version: version as PromptVersion };
}

export async function listDeployments(sql: Sql, organizationId: string): Promise<Deployment[]> {
  const rows = await sql`
    select d.deployment_id, d.updated_at, ${sql.unsafe(VERSION_COLUMNS)}
    from deployments d join prompt_versions v on v.id = d.prompt_version_id
    where d.organization_id = ${organizationId} order by d.deployment_id`;
  return rows.map(({ deployment_id, updated_at, ...version }) => ({
    deployment_id,
    updated_at,
    prompt_version: version as PromptVersion,
  }));
}

/** A deployed version as an llm_configuration, the base that a completion request overrides. */
export function configurationOf(v: PromptVersion): LlmConfiguration {
  return {
    model: v.model,
    provider: v.provider,
    model_params: v.model_params ?? {},
    messages: v.messages,
    functions: v.functions ?? null,
    function_call: v.function_call ?? null,
  };
}
