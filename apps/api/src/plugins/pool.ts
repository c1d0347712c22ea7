import fp from 'fastify-plugin';
import { renderTrees, type SpanTexts } from '@sightline/core';
import { createPool, type Pool } from '@sightline/pool';

declare module 'fastify' {
  interface FastifyInstance {
    pool: Pool;
    /** The trees' JSON from spans PostgreSQL serialized (in their dialect); many spans are rendered on the thread pool. */
    renderTrees(spans: SpanTexts, rootIds: string[]): Promise<Buffer>;
  }
}

// Below this many spans a tree is rendered faster on the event loop than shipped to a thread.
const POOL_TREE_THRESHOLD = 2000;

/** The one thread pool for the API's CPU-heavy work. */
export default fp(
  async (app) => {
    const pool = createPool({ threads: app.config.POOL_THREADS });
    app.decorate('pool', pool);
    app.decorate('renderTrees', async (spans: SpanTexts, rootIds: string[]) =>
      spans.trace_id.length > POOL_TREE_THRESHOLD ? pool.renderTrees(spans, rootIds) : renderTrees(spans, rootIds),
    );
    app.addHook('onClose', async () => pool.close());
  },
  { name: 'pool', dependencies: ['config'] },
);
