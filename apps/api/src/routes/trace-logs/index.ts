import type { FastifyInstance } from 'fastify';
import batch from './batch';
import chainlib from './chainlib';
import list from './list';
import read from './read';
import write from './write';

/** The trace-log routes: writes (single, batch, LangChain runs) answer once durable in Redis; reads wait for them. */
export default async function traceLogRoutes(app: FastifyInstance) {
  await app.register(write);
  await app.register(batch);
  await app.register(chainlib);
  await app.register(read);
  await app.register(list);
}
