import { describe, expect, it } from 'vitest';
import { hashPassword, needsRehash, verifyPassword } from './passwords';

describe('passwords', () => {
  it('checks a password against its hash, salted anew each time', async () => {
    const [a, b] = [await hashPassword('correct horse'), await hashPassword('correct horse')];
    expect(a).toMatch(/^scrypt\$15\$8\$1\$[\w+/=]+\$[\w+/=]+$/);
    expect(a).not.toBe(b);
    await expect(verifyPassword('correct horse', a)).resolves.toBe(true);
    await expect(verifyPassword('correct horsf', a)).resolves.toBe(false);
    await expect(verifyPassword('correct horse', 'not a hash')).resolves.toBe(false);
  });

  it('treats a string and its other Unicode normal form alike', async () => {
    const stored = await hashPassword('caf\u00e9 au lait');
    await expect(verifyPassword('cafe\u0301 au lait', stored)).resolves.toBe(true);
  });

  it('still checks a hash made with weaker parameters, and says it needs redoing', async () => {
    const current = await hashPassword('pw');
    const weaker = current.replace(/^scrypt\$15\$/, 'scrypt$14$');
    expect(needsRehash(current)).toBe(false);
    expect(needsRehash(weaker)).toBe(true);
    // The same salt and key under other parameters no longer match: the parameters are part of the check.
    await expect(verifyPassword('pw', weaker)).resolves.toBe(false);
  });
});
