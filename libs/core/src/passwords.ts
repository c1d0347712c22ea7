import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// Passwords are stored with scrypt, memory-hard, from Node itself. The parameters are written into each
// hash, so that raising them later leaves older hashes checkable (and `needsRehash` says which to redo at
// their owner's next sign-in).
const CURRENT = { log2N: 15, r: 8, p: 1 };
const KEY_BYTES = 32;
const SALT_BYTES = 16;

const derive = (password: string, salt: Buffer, p: typeof CURRENT) =>
  new Promise<Buffer>((resolve, reject) => {
    const options: ScryptOptions = { N: 2 ** p.log2N, r: p.r, p: p.p, maxmem: 256 * 2 ** p.log2N * p.r };
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key)));
  });

/** `scrypt$<log2 N>$<r>$<p>$<salt>$<hash>`, salt and hash in base64: what `users.password_hash` holds. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, CURRENT);
  const { log2N, r, p } = CURRENT;
  return ['scrypt', log2N, r, p, salt.toString('base64'), key.toString('base64')].join('$');
}

function parse(stored: string) {
  const [scheme, log2N, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return null;
  return { params: { log2N: Number(log2N), r: Number(r), p: Number(p) }, salt: Buffer.from(salt, 'base64'), key };
}

/** Whether `password` is the one `stored` was made from; in constant time over the derived key. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored);
  if (!parsed) return false;
  const expected = Buffer.from(parsed.key, 'base64');
  const actual = await derive(password, parsed.salt, parsed.params);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Whether a stored hash was made with weaker parameters than today's. */
export function needsRehash(stored: string): boolean {
  const parsed = parse(stored);
  return !parsed || Object.entries(CURRENT).some(([k, v]) => parsed.params[k as keyof typeof CURRENT] < v);
}

/** A hash of no password, checked against when an email is unknown, so that both answers take as long. */
let decoy: Promise<string> | undefined;
export const decoyHash = () => (decoy ??= hashPassword(randomBytes(16).toString('hex')));

/** A one-time password to hand out (to be replaced at first sign-in): 16 characters of base64url. */
export const oneTimePassword = () => randomBytes(12).toString('base64url');
