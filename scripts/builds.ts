// What the builds `npm start` makes (the console, the server) share: whether one is older than what it reads, and
// how a new one takes the old one's place.
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The newest modification time of a file, or of anything under a directory (0 if it does not exist). */
export function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

/**
 * Puts the build finished in `out` in `dist`'s place. Each build is made in a directory of its own first, so that a
 * process already running the old one (or another start building at the same time) never sees a half-written one.
 */
export function swapIn(out: string, dist: string): void {
  const old = `${dist}.old-${process.pid}`;
  if (existsSync(dist)) renameSync(dist, old);
  renameSync(out, dist);
  rmSync(old, { recursive: true, force: true });
}
