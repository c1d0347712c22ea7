import { describe, expect, it } from 'vitest';
import { ApiEnv, envBoolean, parseEnv, StartEnv, WorkerEnv } from './env';

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
  it('runs both roles unless START_ROLE names one', () => {
    expect(parseEnv(StartEnv, {}).START_ROLE).toBe('all');
    expect(parseEnv(StartEnv, { START_ROLE: 'worker' }).START_ROLE).toBe('worker');
    expect(() => parseEnv(StartEnv, { START_ROLE: 'both' })).toThrow('START_ROLE');
  });
  it('reads SECRETS_KEY as 32 bytes and refuses anything else', () => {
    expect(parseEnv(ApiEnv, { SECRETS_KEY: 'ab'.repeat(32) }).SECRETS_KEY).toHaveLength(32);
    expect(() => parseEnv(ApiEnv, { SECRETS_KEY: 'too-short' })).toThrow('SECRETS_KEY');
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
