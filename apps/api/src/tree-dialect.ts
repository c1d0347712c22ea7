import type { FastifyReply, FastifyRequest } from 'fastify';
import { API_TREES, CLIENT_TREES, type TreeDialect } from '@sightline/core';

/**
 * The official clients send `x-sdk-language` on every request and read trees in their own dialect
 * (`children_logs` nested, `children` ids, no null fields); everyone else gets api.md's (`children` nested,
 * `children_ids`). The answer says it depends on the header, so that no cache serves one dialect for the other.
 */
export function treeDialect(req: FastifyRequest, reply: FastifyReply): TreeDialect {
  const vary = reply.getHeader('vary');
  reply.header('vary', vary ? `${String(vary)}, x-sdk-language` : 'x-sdk-language');
  return req.headers['x-sdk-language'] ? CLIENT_TREES : API_TREES;
}
