import type { FastifyInstance } from 'fastify';
import { findProjectById } from '@sightline/db';
import { notFound } from '../../errors';

/** Seconds in each time range the console offers. */
export const RANGE_SECONDS: Record<string, number> = {
  '1h': 3600,
  '3h': 3 * 3600,
  '6h': 6 * 3600,
  '24h': 86400,
  '7d': 7 * 86400,
  '1m': 30 * 86400,
  '3m': 91 * 86400,
  '6m': 182 * 86400,
  '1y': 365 * 86400,
};

/** The project's uuid, once it is known to belong to the organization (else a 404). */
export async function ownProject(app: FastifyInstance, org: string, uuid: string) {
  if (!(await findProjectById(app.sql, org, uuid))) throw notFound('project');
  return uuid;
}
