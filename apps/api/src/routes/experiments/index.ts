import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { formatTimestamp } from '@sightline/core';
import { createExperiment, findProjectById, listExperiments, type Experiment } from '@sightline/db';
import { z } from 'zod';
import {
  DetailSchema,
  errorResponses,
  ExperimentCreateSchema,
  ExperimentListSchema,
  ExperimentSchema,
} from '@sightline/schemas';
import { AppError, notFound } from '../../errors';
import compare from './compare';
import finish from './finish';
import reads from './reads';

const WORDS = [
  ['brisk', 'calm', 'bold', 'keen', 'quiet', 'swift', 'bright', 'steady', 'eager', 'lucid'],
  ['falcon', 'harbor', 'meadow', 'comet', 'river', 'summit', 'lantern', 'orchid', 'glacier', 'ember'],
];
const pick = (words: string[]) => words[randomBytes(1)[0] % words.length];
const readableRunName = () => `${pick(WORDS[0])}-${pick(WORDS[1])}-${randomBytes(2).toString('hex')}`;

const experimentToWire = (e: Experiment) => ({ ...e, created_at: formatTimestamp(e.created_at) });

/**
 * Experiments: create and list here; stats and trace logs in `reads.ts`; the finish in `finish.ts`; comparing
 * runs in `compare.ts`.
 */
export default async function experimentRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();
  await app.register(finish);
  await app.register(reads);
  await app.register(compare);

  app.post(
    '/experiment',
    {
      schema: {
        body: ExperimentCreateSchema,
        response: { 200: ExperimentSchema, 404: DetailSchema, 409: DetailSchema, ...errorResponses },
        summary: 'Create an experiment',
        tags: ['experiments'],
      },
    },
    async (req) => {
      const { name, project_uuid, run_name, is_public, metadata } = req.body;
      if (!(await findProjectById(app.sql, req.organizationId, project_uuid))) throw notFound('project');
      // A generated name is retried on the rare clash; a given one that clashes is the caller's conflict.
      for (let attempt = 0; attempt < 5; attempt++) {
        const runName = run_name ?? readableRunName();
        const created = await createExperiment(app.sql, req.organizationId, {
          name,
          projectId: project_uuid,
          runName,
          isPublic: is_public ?? false,
          metadata: metadata ?? {},
        });
        if (created) return experimentToWire(created);
        if (run_name) throw new AppError(409, `run_name '${run_name}' is already used in this project`);
      }
      throw new AppError(409, 'could not find a free run name; give one');
    },
  );

  app.post(
    '/experiments',
    {
      config: { access: 'read' },
      schema: {
        body: ExperimentListSchema,
        response: { 200: z.array(ExperimentSchema), ...errorResponses },
        summary: 'List experiments with their high-level stats',
        tags: ['experiments'],
      },
    },
    async (req) => (await listExperiments(app.sql, req.organizationId, req.body)).map(experimentToWire),
  );
}
