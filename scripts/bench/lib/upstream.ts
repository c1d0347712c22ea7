// The fake OpenAI upstream (fake-openai-upstream.ts) started in its own process, for the gateway benchmarks.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { ROOT } from './stack';

/** Starts the fake upstream with `args` (its command-line options); resolves with its base URL once it listens. */
export async function startUpstream(args: string[]): Promise<{ baseURL: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/bench/lib/fake-openai-upstream.ts', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // A benchmark that fails must not leave its upstream running.
  process.once('exit', () => child.exitCode === null && child.kill('SIGKILL'));
  const [line] = (await Promise.race([
    new Promise((resolve) => createInterface({ input: child.stdout! }).once('line', (l) => resolve([l]))),
    new Promise((_, reject) => setTimeout(() => reject(new Error('the fake upstream did not start')), 20_000)),
  ])) as [string];
  const { port } = JSON.parse(line) as { port: number };
  return { baseURL: `http://127.0.0.1:${port}/v1`, child };
}

/** The upstream's counters (`GET /stats`). */
export async function upstreamStats(
  baseURL: string,
): Promise<{ requests: number; failed: number; refused: number; max_in_flight: number }> {
  const res = await fetch(baseURL.replace(/\/v1$/, '/stats'));
  return (await res.json()) as { requests: number; failed: number; refused: number; max_in_flight: number };
}
