import type { z } from 'zod';

/**
 * An error with an HTTP status whose message is safe to show: answered as `{"detail": message}`, with a
 * `Retry-After` header when the client should try again later (a 503 always gets one).
 */
export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export const notFound = (what: string) => new AppError(404, `${what} not found`);

export type ValidationDetail = { loc: (string | number)[]; msg: string; type: string };

/** A bad request body or parameter, answered 422 in the `{"detail":[{loc,msg,type}]}` shape. */
export class RequestValidationError extends Error {
  readonly statusCode = 422;
  constructor(readonly detail: ValidationDetail[]) {
    super(detail.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; '));
  }

  static fromZod(part: string, issues: readonly z.core.$ZodIssue[]): RequestValidationError {
    return new RequestValidationError(
      issues.flatMap((issue) => {
        const loc = [part, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
        if (issue.code === 'unrecognized_keys') {
          return issue.keys.map((key) => ({
            loc: [...loc, key],
            msg: `unknown field '${key}'`,
            type: 'extra_forbidden',
          }));
        }
        return [{ loc, msg: issue.message, type: issue.code }];
      }),
    );
  }
}
