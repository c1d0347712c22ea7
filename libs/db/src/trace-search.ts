import { containsPattern } from '@sightline/core';
import type { Sql } from './client';
import { partOfSpan } from './span-json';

/**
 * The ids of the spans of the trace holding `traceId` whose name, inputs, output or metadata contain `text`
 * (any case), for the trace page's search; null when there is no such trace. The text is found as it is
 * written: `%`, `_` and `\` match themselves. Inputs and metadata are searched as JSON text, so the text is
 * looked for there as JSON writes it (a quote or a line break escaped); every payload is read whole, in the
 * bounds of the API's statement timeout.
 */
export async function traceSpansContaining(
  sql: Sql,
  organizationId: string,
  traceId: string,
  text: string,
): Promise<string[] | null> {
  const plain = containsPattern(text);
  const json = containsPattern(JSON.stringify(text).slice(1, -1));
  const part = await partOfSpan(sql, organizationId, traceId);
  if (part === null) return null;
  const [row] = await sql<{ ids: string[] }[]>`
    select array(
      select s.trace_id::text from spans s
      where s.organization_id = t.organization_id and s.root_trace_id = t.root_trace_id
        and s.part_at = ${part}::timestamptz and s.created
        and (s.trace_name ilike ${plain} or s.output ilike ${plain}
             or s.inputs::text ilike ${json} or s.metadata::text ilike ${json})
      order by s.execution_order nulls last, s.start_ts nulls last, s.trace_id
    ) as ids
    from spans t where t.organization_id = ${organizationId} and t.trace_id = ${traceId} and t.created
      and t.part_at = ${part}::timestamptz`;
  return row?.ids ?? null;
}
