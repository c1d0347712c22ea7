import { ROUTE_MODEL_PREFIX, type CompletionJob, type RouteCreate } from '@sightline/schemas';
import type { Sql } from './client';

export type SavedRoute = RouteCreate & { created_at: Date; updated_at: Date };

/** Saves the route under its name, replacing one of the same name. */
export async function saveRoute(sql: Sql, organizationId: string, route: RouteCreate): Promise<SavedRoute> {
  const [row] = await sql<SavedRoute[]>`
    insert into routes (organization_id, name, strategy, targets, retry_on)
    values (${organizationId}, ${route.name}, ${route.strategy}, ${sql.json(route.targets as never)}, ${route.retry_on})
    on conflict (organization_id, name) do update
      set strategy = excluded.strategy, targets = excluded.targets, retry_on = excluded.retry_on, updated_at = now()
    returning name, strategy, targets, retry_on, created_at, updated_at`;
  return row;
}

export function listRoutes(sql: Sql, organizationId: string) {
  return sql<SavedRoute[]>`
    select name, strategy, targets, retry_on, created_at, updated_at
    from routes where organization_id = ${organizationId} order by name`;
}

export async function findRoute(sql: Sql, organizationId: string, name: string): Promise<SavedRoute | null> {
  const [row] = await sql<SavedRoute[]>`
    select name, strategy, targets, retry_on, created_at, updated_at
    from routes where organization_id = ${organizationId} and name = ${name}`;
  return row ?? null;
}

/**
 * The route a model names (`route:<name>`), as a completion job carries it: undefined for a plain model,
 * null for a route the organization has not saved.
 */
export async function routeOfModel(
  sql: Sql,
  organizationId: string,
  model: string,
): Promise<CompletionJob['route'] | null> {
  if (!model.startsWith(ROUTE_MODEL_PREFIX)) return undefined;
  const route = await findRoute(sql, organizationId, model.slice(ROUTE_MODEL_PREFIX.length));
  return route && { name: route.name, strategy: route.strategy, targets: route.targets, retry_on: route.retry_on };
}

export async function deleteRoute(sql: Sql, organizationId: string, name: string): Promise<boolean> {
  const rows = await sql`delete from routes where organization_id = ${organizationId} and name = ${name} returning 1`;
  return rows.length > 0;
}
