import type { Sql } from './client';

export type Project = { uuid: string; name: string; created_at: Date };

/** Race-safe create-or-get: of many concurrent calls for a new name exactly one inserts and says so. */
export async function getOrCreateProject(
  sql: Sql,
  organizationId: string,
  name: string,
): Promise<Project & { was_created: boolean }> {
  const [inserted] = await sql<Project[]>`
    insert into projects (organization_id, name) values (${organizationId}, ${name})
    on conflict (organization_id, name) do nothing
    returning id as uuid, name, created_at`;
  if (inserted) return { ...inserted, was_created: true };
  const [existing] = await sql<Project[]>`
    select id as uuid, name, created_at from projects where organization_id = ${organizationId} and name = ${name}`;
  return { ...existing, was_created: false };
}

export async function findProjectById(sql: Sql, organizationId: string, id: string): Promise<Project | null> {
  const [row] = await sql<Project[]>`
    select id as uuid, name, created_at from projects where organization_id = ${organizationId} and id = ${id}`;
  return row ?? null;
}

export async function findProjectByName(sql: Sql, organizationId: string, name: string): Promise<Project | null> {
  const [row] = await sql<Project[]>`
    select id as uuid, name, created_at from projects where organization_id = ${organizationId} and name = ${name}`;
  return row ?? null;
}
