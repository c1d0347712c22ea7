import type { FastifyInstance } from 'fastify';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../errors';

/** Sign-in attempts an address may make in a window, whatever their outcome. */
const ATTEMPTS_PER_ADDRESS = 30;
/**
 * Failed sign-ins in a row after which an email is refused for the lock's time; and wrong API keys after
 * which an address may not sign in with a key for the rest of the window.
 */
const FAILURES_BEFORE_LOCK = 10;
const WINDOW_SECONDS = 15 * 60;

/**
 * Limits on sign-in, counted in Redis for every API node (rate-limiter-flexible): per address,
 * attempts in a window; per email, failures in a row, after which the email is locked for a while. Both are
 * counted by the email as typed (lower-cased), known or not, so that a lock tells nothing of whether an
 * account exists.
 */
export function loginLimits(app: FastifyInstance) {
  const byAddress = new RateLimiterRedis({
    storeClient: app.redis,
    keyPrefix: app.keys.loginAttempts,
    points: ATTEMPTS_PER_ADDRESS,
    duration: WINDOW_SECONDS,
  });
  const byEmail = new RateLimiterRedis({
    storeClient: app.redis,
    keyPrefix: app.keys.loginFailures,
    points: FAILURES_BEFORE_LOCK,
    duration: WINDOW_SECONDS,
  });
  const wrongKeys = new RateLimiterRedis({
    storeClient: app.redis,
    keyPrefix: app.keys.keySignInFailures,
    points: FAILURES_BEFORE_LOCK,
    duration: WINDOW_SECONDS,
  });
  const refuse = (res: RateLimiterRes, what: string) => {
    const seconds = Math.ceil(res.msBeforeNext / 1000);
    return new AppError(429, `${what}; try again in ${Math.ceil(seconds / 60)} min`, seconds);
  };

  /** Counts a sign-in begun from the address (a password tried, or a single sign-on started); 429 past the limit. */
  const fromAddress = (address: string) =>
    byAddress.consume(address).then(
      () => {},
      (res: unknown) => {
        throw res instanceof RateLimiterRes ? refuse(res, 'too many sign-in attempts from this address') : res;
      },
    );

  return {
    fromAddress,
    /** Counts an attempt; throws 429 when the address or the email may not try now. */
    async attempt(email: string, address: string): Promise<void> {
      const failures = await byEmail.get(email.toLowerCase());
      if (failures && failures.consumedPoints >= FAILURES_BEFORE_LOCK)
        throw refuse(failures, 'too many failed sign-ins for this email');
      await fromAddress(address);
    },
    async failed(email: string): Promise<void> {
      await byEmail.penalty(email.toLowerCase());
    },
    async succeeded(email: string): Promise<void> {
      await byEmail.delete(email.toLowerCase());
    },
    /**
     * A key sign-in: only wrong keys count (a program's key is not guessed, but an address that tries many is
     * stopped); 429 once the address has tried too many.
     */
    async keyAttempt(address: string): Promise<void> {
      const wrong = await wrongKeys.get(address);
      if (wrong && wrong.consumedPoints >= FAILURES_BEFORE_LOCK)
        throw refuse(wrong, 'too many wrong API keys from this address');
    },
    async keyFailed(address: string): Promise<void> {
      await wrongKeys.penalty(address);
    },
  };
}
