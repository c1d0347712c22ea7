// Results: every benchmark writes bench/results/<name>.json, and docs/benchmarks.md is rebuilt from all
// of them, so the document always shows the latest run of each benchmark with its machine and versions.
import { execSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { ROOT } from './stack';

export const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;
export const quantile = (xs: readonly number[], q: number) =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] : NaN;
export const median = (xs: readonly number[]) => quantile(xs, 0.5);

/** One line of the summary table: a figure, and the target it is held to (if any). */
export type Row = { figure: string; value: string; target?: string; met?: boolean };

export type Result = { benchmark: string; summary: Row[]; [detail: string]: unknown };

function command(cmd: string): string {
  try {
    return execSync(cmd, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

function environment() {
  const pkg = (name: string) => {
    try {
      return (JSON.parse(readFileSync(`${ROOT}/node_modules/${name}/package.json`, 'utf8')) as { version: string })
        .version;
    } catch {
      return 'absent';
    }
  };
  return {
    date: new Date().toISOString(),
    commit: command('git rev-parse --short HEAD'),
    machine: { cores: os.availableParallelism(), cpu: os.cpus()[0]?.model, memory_gb: round(os.totalmem() / 2 ** 30) },
    versions: {
      node: process.version,
      postgresql: command("psql -h 127.0.0.1 -U postgres -Atc 'show server_version'"),
      redis: command('redis-cli info server | grep redis_version | cut -d: -f2'),
      fastify: pkg('fastify'),
      bullmq: pkg('bullmq'),
      autocannon: pkg('autocannon'),
      '@portkey-ai/gateway': pkg('@portkey-ai/gateway'),
    },
  };
}

/** Writes the JSON result and rebuilds docs/benchmarks.md from every result on disk. */
export function writeResult(result: Result): void {
  const full = { ...result, environment: environment() };
  mkdirSync(`${ROOT}/bench/results`, { recursive: true });
  writeFileSync(`${ROOT}/bench/results/${result.benchmark}.json`, JSON.stringify(full, null, 2) + '\n');
  console.log(renderTable(full));
  writeDocument();
}

function renderTable(result: Result & { environment: ReturnType<typeof environment> }): string {
  const { environment: env } = result;
  const lines = [
    `## ${result.benchmark}`,
    '',
    `Run ${env.date.slice(0, 16).replace('T', ' ')} UTC at commit \`${env.commit}\` on ${env.machine.cores} cores (${env.machine.cpu}), ${env.machine.memory_gb} GB; ` +
      `Node ${env.versions.node}, PostgreSQL ${env.versions.postgresql}, Redis ${env.versions.redis}. Raw figures: \`bench/results/${result.benchmark}.json\`.`,
    '',
    '| Figure | Measured | Target | Met |',
    '|---|---|---|---|',
    ...result.summary.map(
      (r) =>
        `| ${r.figure} | ${r.value} | ${r.target ?? ''} | ${r.met === undefined ? '' : r.met ? 'yes' : '**no**'} |`,
    ),
  ];
  return lines.join('\n');
}

const HEADER = `# Benchmarks

Produced by \`npm run bench\` (or \`npm run bench -- <name>\`); each section is rewritten by its benchmark's
latest run. Everything runs on one machine: the API, the worker, PostgreSQL, Redis, the load generator and
any peer under comparison share its cores, so absolute figures are pessimistic and comparisons are ratios
measured within the same run. Figures are medians over the repeated rounds stated in each section.
How each benchmark works, and the analysis of every target missed, is in \`docs/benchmarks-notes.md\`.
`;

function writeDocument(): void {
  const dir = `${ROOT}/bench/results`;
  const sections = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(`${dir}/${f}`, 'utf8')))
    .filter((r) => Array.isArray(r.summary) && r.environment)
    .map(renderTable);
  mkdirSync(`${ROOT}/docs`, { recursive: true });
  writeFileSync(`${ROOT}/docs/benchmarks.md`, [HEADER, ...sections].join('\n\n') + '\n');
}
