import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { formatTimestamp } from '@sightline/core';
import { deleteRoute, listProviderKeys, listRoutes, saveRoute, type SavedRoute } from '@sightline/db';
import {
  DeletedSchema,
  DetailSchema,
  errorResponses,
  RouteCreateSchema,
  RouteSchema,
  UrlText,
} from '@sightline/schemas';
import { notFound, RequestValidationError } from '../../errors';

const routeToWire = (r: SavedRoute) => ({
  name: r.name,
  strategy: r.strategy,
  targets: r.targets,
  retry_on: r.retry_on,
  created_at: formatTimestamp(r.created_at),
  updated_at: formatTimestamp(r.updated_at),
});

/**
 * Named gateway routes (`/routes`): a completion whose model is `route:<name>` is answered by the route's
 * targets, in order (fallback) or by weight (loadbalance). Saving and deleting are for admins, as for
 * the provider keys the targets use.
 */
export default async function gatewayRouteRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/routes',
    {
      config: { access: 'admin' },
      schema: {
        body: RouteCreateSchema,
        response: { 200: RouteSchema, ...errorResponses },
        summary: 'Save (or replace) a named route: fallback or load balancing over provider targets',
        tags: ['routes'],
      },
    },
    async (req) => {
      // A target that names a saved key must find it, or its calls would fail (see credentials.ts).
      const saved = new Set((await listProviderKeys(app.sql, req.organizationId)).map((k) => k.provider));
      const missing = req.body.targets.flatMap((t, i) =>
        t.provider_key && !saved.has(t.provider_key)
          ? [
              {
                loc: ['body', 'targets', i, 'provider_key'],
                msg: `no saved provider key '${t.provider_key}': save it with POST /api/svc/v1/provider-keys first`,
                type: 'value_error',
              },
            ]
          : [],
      );
      if (missing.length) throw new RequestValidationError(missing);
      return routeToWire(await saveRoute(app.sql, req.organizationId, req.body));
    },
  );

  app.get(
    '/routes',
    {
      schema: {
        response: { 200: z.array(RouteSchema), ...errorResponses },
        summary: "The organization's routes",
        tags: ['routes'],
      },
    },
    async (req) => (await listRoutes(app.sql, req.organizationId)).map(routeToWire),
  );

  app.delete(
    '/routes/:name',
    {
      config: { access: 'admin' },
      schema: {
        params: z.object({ name: UrlText.pipe(z.string().min(1)) }),
        response: { 200: DeletedSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Delete a route',
        tags: ['routes'],
      },
    },
    async (req) => {
      if (!(await deleteRoute(app.sql, req.organizationId, req.params.name)))
        throw notFound(`route '${req.params.name}'`);
      return { name: req.params.name, deleted: true };
    },
  );
}
