// The fake OpenAI upstream (fake-openai-upstream.ts) started in its own process, for the gateway benchmarks.
import type { ChildProcess } from 'node:child_process';
import { startReporting } from './stack';

/** Starts the fake upstream with `args` (its command-line options); resolves with its base URL once it listens. */
export async function startUpstream(args: string[]): Promise<{ baseURL: string; child: ChildProcess }> {
  const { child, report } = await startReporting<{ port: number }>('scripts/bench/lib/fake-openai-upstream.ts', args);
  return { baseURL: `http://127.0.0.1:${report.port}/v1`, child };
}

/** The upstream's counters (`GET /stats`). */
export async function upstreamStats(
  baseURL: string,
): Promise<{ requests: number; failed: number; refused: number; max_in_flight: number }> {
  const res = await fetch(baseURL.replace(/\/v1$/, '/stats'));
  return (await res.json()) as { requests: number; failed: number; refused: number; max_in_flight: number };
}
