import fp from 'fastify-plugin';
import { MAX_NESTING, nestsDeeperThan, parseStorableJson } from '@sightline/core';
import { RequestValidationError } from '../errors';

export default fp(
  async (app) => {
    // PostgreSQL refuses NUL characters in text and jsonb, and lone UTF-16 surrogates in jsonb: bodies are
    // parsed with parseStorableJson, which cleans both.
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
      const text = body as string;
      if (text.trim() === '') return done(null, undefined);
      if (nestsDeeperThan(text, MAX_NESTING)) {
        return done(
          new RequestValidationError([
            { loc: ['body'], msg: `JSON nests deeper than ${MAX_NESTING} levels`, type: 'too_deep' },
          ]),
          undefined,
        );
      }
      try {
        done(null, parseStorableJson(text));
      } catch (err) {
        done(
          new RequestValidationError([
            { loc: ['body'], msg: `JSON decode error: ${(err as Error).message}`, type: 'json_invalid' },
          ]),
          undefined,
        );
      }
    });
  },
  { name: 'json-body' },
);
