import type { FastifyInstance } from 'fastify';
import type { FilterInput } from '@sightline/core';
import type { RootQuery } from '@sightline/db';
import type { GetTraceLogsSchema, TraceSort } from '@sightline/schemas';
import type { z } from 'zod';

type ListingBody = z.infer<typeof GetTraceLogsSchema> & {
  project_uuid?: string | null;
  search?: string | null;
  sort?: TraceSort;
};

/**
 * The root listing a get_trace_logs-shaped body asks for, or null when it names a project the
 * organization does not have (an empty page, not a 404, as api.md answers).
 */
export async function rootQueryOf(
  app: FastifyInstance,
  organizationId: string,
  body: ListingBody,
): Promise<RootQuery | null> {
  let projectId = body.project_uuid ?? null;
  if (!projectId && body.project_name) {
    projectId = await app.findProjectId(organizationId, body.project_name);
    if (!projectId) return null;
  }
  return {
    organizationId,
    projectId,
    includeExperiments: body.include_experiments,
    filter: body,
    filters: filterInputsOf(body.filters),
    timeRange: body.time_range,
    status: body.status,
    search: body.search,
    sort: body.sort,
    page: body.page,
    pageSize: body.page_size,
  };
}

/** A body's `filters` as the filter compiler takes them (the listing's and the dashboard's). */
export const filterInputsOf = (filters: ListingBody['filters']): FilterInput[] | undefined =>
  filters?.map((f) => ({
    filter_field: f.field,
    filter_key: f.key,
    filter_operator: f.operator,
    filter_value: f.value,
  }));

/**
 * A page's JSON around its results, which are already JSON (a `[...]` array). `more` says that pages may
 * follow the total (a lower bound); `extra` members go before the results.
 */
export function pageJson(
  body: { page: number; page_size: number },
  total: number,
  results: Buffer,
  { more = false, extra = {} }: { more?: boolean; extra?: Record<string, unknown> } = {},
): Buffer {
  const head = JSON.stringify({
    total,
    page: body.page,
    total_pages: Math.ceil(total / body.page_size) + (more ? 1 : 0),
    page_size: body.page_size,
    ...extra,
  });
  return Buffer.concat([Buffer.from(`${head.slice(0, -1)},"results":`), results, Buffer.from('}')]);
}
