import type { FastifyInstance } from 'fastify';
import agreement from './agreement';
import annotations from './annotations';
import comments from './comments';
import criteria from './criteria';

/**
 * Comments and annotations made in the console, and the criteria annotations use. They are written as
 * span events (durable once answered, merged entry by entry) into the span's `comments` and `annotations`,
 * in compat.md's shapes, where the clients and the `annotation:` filters find them.
 */
export default async function remarkRoutes(app: FastifyInstance) {
  await app.register(criteria);
  await app.register(comments);
  await app.register(annotations);
  await app.register(agreement);
}
