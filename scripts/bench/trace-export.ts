// Benchmark trace-export: POST /traces/export of a whole project of 1M spans (200k traces of 5 spans, the
// queries benchmark's shapes, seeded straight into PostgreSQL), in each format, read to the last byte by curl
// on the same machine. Writes bench/results/trace-export.json.
//
// The floor: PostgreSQL's own bulk read of the same spans, serialized by it as the export's JSONL lines are
// (`COPY (select '{' || <the API's fields> || '}' ...) TO STDOUT` through psql to /dev/null), in the same run.
// The CSV floor: the same COPY in CSV format, PostgreSQL's own writer quoting each span's JSON as a CSV cell (every
// `"` doubled, as the by-trace CSV's `children` needs): what CSV costs the database beyond the text.
// The API's peak memory is read from /proc after all the exports (VmHWM), and its current memory after each.
import { spawnSync } from 'node:child_process';
import { getOrCreateProject, SPAN_JSON_SQL } from '@sightline/db';
import { seedTraces } from './lib/seed';
import { median, round, writeResult, type Row } from './lib/report';
import { createBenchStack, freePort, peakRssMb, rssMb } from './lib/stack';

const TRACES = Number(process.env.BENCH_TRACES ?? 200_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TARGET_SPANS_PER_S = 50_000;
const TARGET_RSS_MB = 300;

// BENCH_EXPORT_LEGS=jsonl-spans,csv-spans runs only those (to profile one).
const LEGS = (
  [
    { format: 'jsonl', shape: 'spans' },
    { format: 'jsonl', shape: 'traces' },
    { format: 'csv', shape: 'spans' },
    { format: 'csv', shape: 'traces' },
    { format: 'parquet', shape: 'spans' },
    { format: 'parquet', shape: 'traces' },
  ] as const
).filter(
  (leg) =>
    !process.env.BENCH_EXPORT_LEGS || process.env.BENCH_EXPORT_LEGS.split(',').includes(`${leg.format}-${leg.shape}`),
);

const stack = await createBenchStack({ port: await freePort() });
const { sql } = stack;

try {
  const project = await getOrCreateProject(sql, stack.organizationId, 'bench');
  const t = performance.now();
  await seedTraces(sql, {
    organizationId: stack.organizationId,
    projectId: project.uuid,
    traces: TRACES,
    onProgress: (n) => process.stdout.write(`\rseeded ${n} spans`),
  });
  await sql`vacuum (analyze) spans, span_scores, trace_roots`;
  const [{ spans }] = await sql`select count(*)::int as spans from spans where project_id = ${project.uuid}`;
  console.log(`\nseeded ${spans} spans in ${round((performance.now() - t) / 1000)} s`);

  await stack.start({ worker: false });
  const restingRss = rssMb(stack.apiPid);

  /** One export read to its end by curl (a client that costs the machine little): seconds and bytes. */
  function exportOnce(format: string, shape: string) {
    const headers = Object.entries(stack.headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
    const curl = spawnSync(
      'curl',
      [
        '-sS',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code} %{size_download} %{time_total}',
        ...headers,
        '--data-binary',
        JSON.stringify({ project_name: 'bench', format, shape }),
        `${stack.base}/traces/export`,
      ],
      { encoding: 'utf8' },
    );
    const [status, bytes, seconds] = curl.stdout.split(' ').map(Number);
    if (status !== 200) throw new Error(`${format} ${shape} answered ${status}: ${curl.stderr}`);
    return { seconds: seconds!, bytes: bytes! };
  }

  /** The floor: PostgreSQL serializing the same spans as the JSONL lines (or as CSV cells), straight to psql. */
  function floorOnce(format: 'text' | 'csv') {
    const started = performance.now();
    const copy = spawnSync(
      'psql',
      [
        stack.databaseUrl,
        '-Atc',
        `\\copy (select ${SPAN_JSON_SQL} from spans s left join projects p on p.id = s.project_id where s.organization_id = '${stack.organizationId}' and s.project_id = '${project.uuid}' and s.created) to '/dev/null' with (format ${format})`,
      ],
      { encoding: 'utf8' },
    );
    if (copy.status !== 0) throw new Error(`psql: ${copy.stderr}`);
    return (performance.now() - started) / 1000;
  }

  const rounds: Record<string, { seconds: number; bytes: number; rss_mb: number }[]> = {};
  const floor: number[] = [];
  const csvFloor: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    floor.push(floorOnce('text'));
    csvFloor.push(floorOnce('csv'));
    for (const { format, shape } of LEGS) {
      const leg = `${format} ${shape}`;
      const once = exportOnce(format, shape);
      (rounds[leg] ??= []).push({ ...once, rss_mb: round(rssMb(stack.apiPid)) });
      console.log(`round ${r + 1}: ${leg} in ${round(once.seconds, 2)} s, ${round(once.bytes / 2 ** 20)} MiB`);
    }
  }
  const peak = peakRssMb(stack.apiPid);
  const rate = (seconds: number) => spans / seconds;
  const summary: Row[] = [
    {
      figure: `floor: PostgreSQL's COPY of the same spans' fields, spans/s (rounds: ${floor.map((s) => round(rate(s))).join(', ')})`,
      value: String(round(rate(median(floor)))),
    },
    {
      figure: `CSV floor: the same COPY in CSV format, each span's JSON a quoted cell, spans/s (rounds: ${csvFloor.map((s) => round(rate(s))).join(', ')})`,
      value: `${round(rate(median(csvFloor)))} (${round(median(floor) / median(csvFloor), 2)}x the floor)`,
    },
    ...LEGS.map(({ format, shape }): Row => {
      const leg = rounds[`${format} ${shape}`]!;
      const best = rate(median(leg.map((x) => x.seconds)));
      return {
        figure: `${format}, a row per ${shape === 'spans' ? 'span' : 'trace'}: spans/s (rounds: ${leg.map((x) => round(rate(x.seconds))).join(', ')}), MiB`,
        value: `${round(best)} (${round(best / rate(median(floor)), 2)}x the floor${format === 'csv' ? `, ${round(best / rate(median(csvFloor)), 2)}x the CSV floor` : ''}), ${round(median(leg.map((x) => x.bytes)) / 2 ** 20)} MiB`,
        target: `≥ ${TARGET_SPANS_PER_S}`,
        met: best >= TARGET_SPANS_PER_S,
      };
    }),
    { figure: 'API memory before any export (VmRSS)', value: `${round(restingRss)} MB` },
    {
      figure: 'API peak memory over every export (VmHWM)',
      value: `${round(peak)} MB`,
      target: `< ${TARGET_RSS_MB} MB`,
      met: peak < TARGET_RSS_MB,
    },
  ];
  writeResult({
    benchmark: 'trace-export',
    summary,
    method: `${ROUNDS} rounds; per round the floor, then each format once, read by curl to the last byte; figures are medians over rounds`,
    data: { spans, traces: TRACES },
    rounds,
    floor_seconds: floor.map((s) => round(s, 3)),
    csv_floor_seconds: csvFloor.map((s) => round(s, 3)),
    peak_rss_mb: { api: round(peak) },
  });
} finally {
  await stack.stop();
}
