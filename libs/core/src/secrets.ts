import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

// AES-256-GCM: a fresh 96-bit nonce per value; the auth tag makes tampering or a wrong key fail loudly.
// Sealed form: "v1:" + base64url(nonce | tag | ciphertext).

export function parseSecretsKey(text: string): Buffer | null {
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  return key.length === 32 ? key : null;
}

export function seal(key: Buffer, plaintext: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `v1:${Buffer.concat([nonce, cipher.getAuthTag(), body]).toString('base64url')}`;
}

export function unseal(key: Buffer, sealed: string): string {
  if (!sealed.startsWith('v1:')) throw new Error('unknown sealed-secret format');
  const raw = Buffer.from(sealed.slice(3), 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}
