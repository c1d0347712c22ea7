// Benchmark 2: batch ingest (`POST /trace_logs/batch`, 1000 spans a request), 8 connections, with its
// ceilings. See lib/ingest.ts.
import { ingestRows, runIngestBenchmark } from './lib/ingest';
import { writeResult } from './lib/report';

const run = await runIngestBenchmark({ name: 'ingest-batch', spansPerRequest: 1000, connections: 8 });
writeResult({
  benchmark: 'ingest-batch',
  summary: ingestRows(run, { endToEnd: 20_000, ceilingShare: { of: 'postgres', share: 0.5 } }),
  rounds: run.rounds,
  fixed_rates: run.fixed,
  peak_rss_mb: run.peak,
});
process.exit(0);
