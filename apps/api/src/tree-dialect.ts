import type { FastifyRequest } from 'fastify';
import { API_TREES, CLIENT_TREES, type TreeDialect } from '@sightline/core';

/**
 * The official clients send `x-sdk-language` on every request and read trees in their own dialect
 * (`children_logs` nested, `children` ids); everyone else gets api.md's (`children` nested, `children_ids`).
 */
export function treeDialect(req: FastifyRequest): TreeDialect {
  return req.headers['x-sdk-language'] ? CLIENT_TREES : API_TREES;
}
