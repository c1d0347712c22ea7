import { describe, expect, it } from 'vitest';
import { ApiEnv, envBoolean, parseEnv, WorkerEnv } from './env';

describe('environment', () => {
  it('applies the documented defaults', () => {
    expect(parseEnv(ApiEnv, {})).toMatchObject({
      PORT: 8000,
      HOST: '127.0.0.1',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/sightline',
      REDIS_URL: 'redis://127.0.0.1:6379',
      QUEUE_PREFIX: 'sightline',
      BODY_LIMIT_BYTES: 10 * 1024 * 1024,
    });
    expect(parseEnv(WorkerEnv, {}).WORKER_CONCURRENCY).toBeGreaterThan(0);
  });
  it('coerces numbers and treats empty variables as unset', () => {
    expect(parseEnv(ApiEnv, { PORT: '9001', HOST: '' })).toMatchObject({ PORT: 9001, HOST: '127.0.0.1' });
    expect(parseEnv(WorkerEnv, { WORKER_CONCURRENCY: '8' }).WORKER_CONCURRENCY).toBe(8);
  });
  it('accepts true/1 as booleans', () => {
    expect(envBoolean.parse('true')).toBe(true);
    expect(envBoolean.parse('1')).toBe(true);
    expect(envBoolean.parse('0')).toBe(false);
    expect(() => envBoolean.parse('maybe')).toThrow();
  });
  it('names every bad variable', () => {
    const bad = () => parseEnv(ApiEnv, { PORT: 'eighty', REDIS_URL: 'not a url', QUEUE_PREFIX: 'has space' });
    for (const name of ['PORT', 'REDIS_URL', 'QUEUE_PREFIX']) expect(bad).toThrow(name);
  });
});
