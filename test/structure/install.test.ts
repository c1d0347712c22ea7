import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

// `npm install` on a clean clone warns of nothing. `engines.node` is the promise the README's "Node 20"
// rests on: every installed package, the development tools included, must run on every Node.js it allows
// (content-disposition 3 and cookie 2 need Node 22: package.json's overrides keep the versions before).
// And every package with an install script is reviewed in `allowScripts`, which npm 12 enforces.
const root = (file: string) => JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'));

describe('npm install', () => {
  it('allows no Node.js that an installed package refuses, and includes the one running', () => {
    const ours: string = root('package.json').engines.node;
    const packages: Record<string, { engines?: { node?: string } }> = root('package-lock.json').packages;
    const refusing = Object.entries(packages)
      .filter(([, p]) => typeof p.engines?.node === 'string' && !semver.subset(ours, p.engines.node))
      .map(([path, p]) => `${path}: ${p.engines!.node}`);
    expect(refusing).toEqual([]);
    expect(semver.satisfies(process.version, ours)).toBe(true);
  });

  it('runs only the install scripts package.json allows', () => {
    const allowed: Record<string, boolean> = root('package.json').allowScripts;
    const packages: Record<string, { hasInstallScript?: boolean; link?: boolean }> = root('package-lock.json').packages;
    const unreviewed = Object.entries(packages)
      .filter(([path, p]) => path !== '' && p.hasInstallScript && !p.link)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length))
      .filter((name) => allowed[name] === undefined);
    expect(unreviewed).toEqual([]);
  });
});
