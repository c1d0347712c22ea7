import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/processes';

// The README and docs/ link only to files of the repository, which a reader of a clone has.
const documents = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

describe('links in the README and docs/', () => {
  it.each(documents)('%s links only to files that exist here', (doc) => {
    const text = readFileSync(join(ROOT, doc), 'utf8');
    const targets = [...text.matchAll(/\]\(([^)\s]+)\)/g)]
      .map((m) => m[1]!.split('#')[0]!)
      .filter((t) => t && !/^[a-z]+:/.test(t));
    const missing = targets.filter((t) => !existsSync(join(ROOT, dirname(doc), t)));
    expect(missing).toEqual([]);
    expect(text).not.toMatch(/\.\.\/shared\//);
  });
});
