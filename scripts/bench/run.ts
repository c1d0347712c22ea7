// `npm run bench -- <name>` runs scripts/bench/<name>.ts; without a name, every benchmark in turn.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const all = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
  .map((f) => f.slice(0, -3));
const wanted = process.argv.slice(2);
for (const name of wanted.length ? wanted : all) {
  if (!all.includes(name)) {
    console.error(`unknown benchmark '${name}'; have: ${all.join(', ')}`);
    process.exit(2);
  }
  const { status } = spawnSync(process.execPath, ['--import', 'tsx', `${dir}${name}.ts`], { stdio: 'inherit' });
  if (status !== 0) process.exit(status ?? 1);
}
