import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { formatTimestamp } from '@sightline/core';
import {
  deleteRoute,
  findRoute,
  listProviderKeys,
  listRoutes,
  saveRoute,
  transaction,
  type SavedRoute,
} from '@sightline/db';
import {
  DeletedSchema,
  DetailSchema,
  errorResponses,
  RouteCreateSchema,
  RouteSchema,
  UrlText,
} from '@sightline/schemas';
import { notFound, RequestValidationError } from '../../errors';
import { recordChange } from '../../services/audit';

const routeToWire = (r: SavedRoute) => ({
  name: r.name,
  strategy: r.strategy,
  targets: r.targets,
  retry_on: r.retry_on,
  created_at: formatTimestamp(r.created_at),
  updated_at: formatTimestamp(r.updated_at),
});

const routeTarget = (name: string) => ({ kind: 'route' as const, id: name, name });

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
      return transaction(app.sql, async (tx) => {
        const before = await findRoute(tx, req.organizationId, req.body.name);
        const after = routeToWire(await saveRoute(tx, req.organizationId, req.body));
        await recordChange(tx, req, {
          action: before ? 'update' : 'create',
          target: routeTarget(after.name),
          before: before && routeToWire(before),
          after,
        });
        return after;
      });
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
      const { name } = req.params;
      await transaction(app.sql, async (tx) => {
        const before = await findRoute(tx, req.organizationId, name);
        if (!before || !(await deleteRoute(tx, req.organizationId, name))) throw notFound(`route '${name}'`);
        await recordChange(tx, req, { action: 'delete', target: routeTarget(name), before: routeToWire(before) });
      });
      return { name, deleted: true };
    },
  );
}
