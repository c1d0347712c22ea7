import fp from 'fastify-plugin';
import { storableText } from '@sightline/core';
import { RequestValidationError } from '../errors';

// PostgreSQL refuses NUL characters in text and jsonb, and lone UTF-16 surrogates in jsonb. JSON can
// carry both as escapes, so they are cleaned while parsing; the costly reviver runs only for bodies
// that contain such an escape.
const SUSPECT = /\\u0000|\\u[dD][89a-fA-F]/;

function clean(this: unknown, _key: string, value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    if (Object.keys(obj).some((k) => k.includes('\0') || !k.isWellFormed())) {
      return Object.fromEntries(Object.entries(obj).map(([k, v]) => [storableText(k), v]));
    }
  }
  return value;
}

// Deeper JSON than this is refused: serializing it again (for the queue, for jsonb) would overflow the stack.
const MAX_NESTING = 256;

/** True when brackets outside strings nest deeper than `limit`; one pass over the text, no parsing. */
function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0,
    inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91 /* { [ */) {
      if (++depth > limit) return true;
    } else if (c === 125 || c === 93 /* } ] */) depth--;
  }
  return false;
}

export default fp(
  async (app) => {
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
        done(null, SUSPECT.test(text) ? JSON.parse(text, clean) : JSON.parse(text));
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
