// Benchmark 1: single-span ingest (`POST /trace_log`), 64 connections, with its ceilings. See lib/ingest.ts.
import { ingestRows, runIngestBenchmark } from './lib/ingest';
import { writeResult } from './lib/report';

const run = await runIngestBenchmark({ name: 'ingest', spansPerRequest: 1, connections: 64 });
writeResult({
  benchmark: 'ingest',
  summary: ingestRows(run, { endToEnd: 5000, ceilingShare: { of: 'bare', share: 0.4 } }),
  rounds: run.rounds,
  fixed_rates: run.fixed,
  peak_rss_mb: run.peak,
});
process.exit(0);
