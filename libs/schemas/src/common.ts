import { z } from 'zod';
import { parseTimestamp, storableText, UUID } from '@sightline/core';

export const Uuid = z
  .string()
  .regex(new RegExp(`^${UUID}$`), 'must be a UUID')
  .transform((s) => s.toLowerCase());

/**
 * An optional id. The Python client sends `""` for "none" (`root_trace_id` of every completion made outside
 * a trace), so an empty string reads as absent, like null.
 */
export const OptionalUuid = z
  .string()
  .regex(new RegExp(`^(${UUID})?$`), 'must be a UUID')
  .transform((s) => (s ? s.toLowerCase() : undefined))
  .nullish();

/** Optional text naming something (a deployment id): an empty string reads as absent, as for ids. */
export const OptionalName = z
  .string()
  .transform((s) => s || undefined)
  .nullish();

/** Accepts ISO 8601 (with or without fraction and zone) and `YYYY-MM-DD HH:MM:SS`; yields a canonical UTC ISO string. */
export const Timestamp = z.string().transform((value, ctx) => {
  const parsed = parseTimestamp(value);
  if (!parsed) {
    ctx.addIssue({ code: 'custom', message: 'invalid timestamp: use ISO 8601 or YYYY-MM-DD HH:MM:SS' });
    return z.NEVER;
  }
  return parsed.iso;
});

export const Fraction = z.number().min(0).max(1);
export const Count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** Depth and execution order are int4 columns. */
export const SmallCount = z.number().int().min(0).max(2_147_483_647);
/**
 * Text that is indexed (names, ids, tags) must fit a B-tree index row (about 2.7 kB): 512 characters
 * of up to 4 bytes each always do.
 */
export const IndexedText = z.string().max(512);
/** A model's name: indexed with its trace's sums (migration 00012), so as long as indexed text may be. */
export const ModelName = z.string().min(1).max(512);
/**
 * A provider as a call names it: a built-in one, or one saved with a key (at most 64 characters). A longer name
 * is no provider's, and is refused before the call: the call's log is named after it (`llm-<provider>`), and a
 * name too long for the trace names' index made a log that PostgreSQL could not store.
 */
export const ProviderText = z.string().min(1).max(64, "no provider's name is longer than 64 characters");
/** The x-request-id of the API request a job or span event came from: the worker's log lines about it carry it. */
export const RequestId = z.string().max(128).optional();
export const JsonObject = z.record(z.string(), z.unknown());
/** Text from a URL (a path segment or a query value), cleaned as JSON bodies are: `%00` decodes to NUL. */
export const UrlText = z.string().transform(storableText);
/**
 * An integer id in a path, in decimal digits only: z.coerce.number would also take '0x10', '1e3' or ' 1',
 * naming row 16, 1000 or 1 by another spelling (GET /collection/{identifier} reads those as names).
 */
export const PathId = z
  .string()
  .regex(/^\d{1,15}$/, 'must be a positive integer')
  .transform(Number)
  .pipe(z.number().int().positive());
