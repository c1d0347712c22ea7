import { describe, expect, it } from 'vitest';
import { checkLimitVariables, envLimits, laneOf } from './lane-config';

describe('lanes', () => {
  it("takes a server-wide provider's limits from its environment variables", () => {
    const env = { OPENAI_MAX_CONCURRENT: '10', OPENAI_RPM: '500', AZURE_OPENAI_TPM: '90000' };
    expect(envLimits(env, 'openai')).toEqual({ max_concurrent: 10, rpm: 500, tpm: null });
    expect(envLimits(env, 'azure')).toEqual({ max_concurrent: null, rpm: null, tpm: 90000 });
    expect(envLimits(env, 'anthropic')).toEqual({ max_concurrent: null, rpm: null, tpm: null });
  });

  it('refuses to start with a limit that is not a positive integer, naming each', () => {
    expect(() => checkLimitVariables({ OPENAI_RPM: '500', ANTHROPIC_MAX_CONCURRENT: '' })).not.toThrow();
    expect(() => checkLimitVariables({ OPENAI_RPM: '0', ANTHROPIC_TPM: '1e5', GROQ_MAX_CONCURRENT: 'ten' })).toThrow(
      /OPENAI_RPM: must be a positive integer\n.*ANTHROPIC_TPM.*\n.*GROQ_MAX_CONCURRENT/,
    );
  });

  it('is one per provider account: the same key shares a lane, another key or base URL does not', () => {
    const none = { max_concurrent: null, rpm: null, tpm: null };
    const a = laneOf('openai', 'saved', { apiKey: 'sk-1' }, none);
    expect(laneOf('openai', 'server', { apiKey: 'sk-1' }, none).id).toBe(a.id);
    expect(laneOf('openai', 'saved', { apiKey: 'sk-2' }, none).id).not.toBe(a.id);
    expect(laneOf('openai', 'saved', { apiKey: 'sk-1', baseURL: 'https://eu.example' }, none).id).not.toBe(a.id);
    expect(a.id).toMatch(/^openai-[0-9a-f]{20}$/);
    expect(JSON.stringify(a)).not.toContain('sk-1');
  });
});
