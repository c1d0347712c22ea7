import { MissingVariablesError } from '@sightline/llm/prepare';
import { RequestValidationError } from '../errors';

/** Runs a template fill, turning missing variables into a 422 that names each, under body.<field>. */
export function withTemplateErrorsAt<T>(field: string, fill: () => T): T {
  try {
    return fill();
  } catch (err) {
    if (!(err instanceof MissingVariablesError)) throw err;
    throw new RequestValidationError(
      err.names.map((name) => ({
        loc: ['body', field, name],
        msg: `missing template variable '${name}'`,
        type: 'missing',
      })),
    );
  }
}
