import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseSecretsKey, seal, unseal } from './secrets';

describe('sealed secrets', () => {
  const key = randomBytes(32);
  it('round-trips and never shows the plaintext', () => {
    const sealed = seal(key, 'sk-secret-123');
    expect(sealed).not.toContain('sk-secret');
    expect(unseal(key, sealed)).toBe('sk-secret-123');
    expect(seal(key, 'sk-secret-123')).not.toBe(sealed);
  });
  it('fails under another key or when tampered with', () => {
    const sealed = seal(key, 'sk-secret-123');
    expect(() => unseal(randomBytes(32), sealed)).toThrow();
    const tampered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
    expect(() => unseal(key, tampered)).toThrow();
  });
  it('takes the key as 64 hex digits or base64 of 32 bytes', () => {
    expect(parseSecretsKey(key.toString('hex'))).toEqual(key);
    expect(parseSecretsKey(key.toString('base64'))).toEqual(key);
    expect(parseSecretsKey('short')).toBeNull();
  });
});
