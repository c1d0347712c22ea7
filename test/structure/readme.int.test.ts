import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/fake-openai';
import { freePort, ROOT } from '../support/processes';
import { databaseUrl, redisUrl, testSql, uniquePrefix } from '../support/services';

// The README's snippets, run as written against `npm start`'s processes, so that the README cannot drift
// from what works. Each runnable block follows a `<!-- readme-test: name -->` marker. Two things differ
// from a newcomer's machine: the address (the README's 127.0.0.1:8000 becomes a free port) and the
// services (a database of the test's own, a fake OpenAI server); `npm install` lines are left out, as
// the packages they name are already installed here.
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const README_ORIGIN = 'http://127.0.0.1:8000';
const README_GRPC = '127.0.0.1:4317';

function snippet(name: string): string {
  const match = new RegExp(`<!-- readme-test: ${name} -->\\s*\`\`\`\\w+\\n([\\s\\S]*?)\`\`\``).exec(README);
  if (!match) throw new Error(`README.md has no block marked "readme-test: ${name}"`);
  return match[1]!;
}
const withoutInstalls = (script: string) =>
  script
    .split('\n')
    .filter((line) => !/^\s*(npm|pip) install\b/.test(line))
    .join('\n');

/** Runs a shell snippet with bash and answers its standard output; fails on a non-zero exit. */
function bash(script: string, options: { cwd?: string; env?: Record<string, string> } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, ...options.env },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${err}${out}`))));
  });
}

let port: number;
let origin: string;
let grpcAddress: string;
let server: ChildProcess;
let serverOutput = '';
const openai = new FakeOpenAI();
const database = `sightline_readme_${randomBytes(4).toString('hex')}`;
const local = (script: string) =>
  withoutInstalls(script).replaceAll(README_ORIGIN, origin).replaceAll(README_GRPC, grpcAddress);
const key = () => /BOOTSTRAP_API_KEY=(\S+)/.exec(snippet('start'))![1]!;

async function api(path: string, body?: unknown) {
  const res = await fetch(`${origin}/api/svc/v1${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'x-api-key': key(), 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

type TraceRow = { trace_id: string; trace_name: string; start_timestamp: string };

/** The project's root traces once they are written (span writes go through the queue). */
async function rootsOf(project: string, expected: number) {
  for (let i = 0; ; i++) {
    const page = (await api('/traces', { project_name: project, page_size: 50 })) as { results: TraceRow[] };
    if (page.results.length >= expected || i === 100) return page.results;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  await openai.start();
  port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  grpcAddress = `127.0.0.1:${await freePort()}`;
  const url = new URL(databaseUrl());
  url.pathname = `/${database}`;
  // The quick start as written, in a process group of its own so that every process it starts is stopped.
  server = spawn('bash', ['-c', local(snippet('start'))], {
    cwd: ROOT,
    detached: true,
    env: {
      ...process.env,
      PORT: String(port),
      OTLP_GRPC_PORT: grpcAddress.split(':')[1],
      DATABASE_URL: url.toString(),
      REDIS_URL: redisUrl(),
      QUEUE_PREFIX: uniquePrefix('readme'),
      OPENAI_API_KEY: 'sk-readme-test',
      OPENAI_BASE_URL: openai.baseURL,
    },
  });
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      serverOutput += d;
      if (/listening on/.test(serverOutput) && /worker started/.test(serverOutput)) resolve();
    };
    server.stdout!.on('data', onData);
    server.stderr!.on('data', onData);
    server.on('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${serverOutput}`)));
  });
  await ready;
}, 120_000);

afterAll(async () => {
  if (server?.exitCode === null) {
    const exited = new Promise((resolve) => server.on('exit', resolve));
    process.kill(-server.pid!, 'SIGTERM');
    await exited;
  }
  await openai.stop();
  const sql = testSql();
  await sql.unsafe(`drop database if exists ${database} with (force)`);
  await sql.end();
}, 60_000);

describe('the README', () => {
  it('starts with its quick start, and its first trace is stored, stamped when it arrived', async () => {
    const before = Date.now();
    const answer = JSON.parse(await bash(local(snippet('first-trace'))));
    expect(answer).toEqual({ trace_id: expect.any(String), sampled: true });
    const [row] = await rootsOf('demo', 1);
    expect(row).toMatchObject({ trace_id: answer.trace_id, trace_name: 'hello' });
    const stamped = Date.parse(row.start_timestamp);
    expect(stamped).toBeGreaterThanOrEqual(before - 1000);
    expect(stamped).toBeLessThanOrEqual(Date.now());
  });

  it('calls the provider through the gateway, and traces the call', async () => {
    const answer = JSON.parse(await bash(local(snippet('gateway'))));
    expect(answer).toMatchObject({ status: 'success', content: 'echo: Say hello', provider: 'openai' });
    expect(openai.requests.at(-1)?.headers.authorization).toBe('Bearer sk-readme-test');
    const rows = await rootsOf('my-app', 1);
    expect(rows.map((r) => r.trace_id)).toContain(answer.trace_id);
  });

  it('sends the OpenTelemetry example with the standard variables, over OTLP/HTTP and OTLP/gRPC', async () => {
    // In the repository, so that the example finds the OpenTelemetry packages in its node_modules.
    const dir = join(ROOT, 'test-artifacts', `readme-${randomBytes(3).toString('hex')}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'trace.mjs'), snippet('otel'));
    await bash(local(snippet('otel-env')), { cwd: dir });
    const rows = await rootsOf('my-app', 2);
    expect(rows.map((r) => r.trace_name)).toContain('chat gpt-4o-mini');
    // The same program over OTLP/gRPC, as the README changes it.
    await bash(local(snippet('otel-grpc-env')), { cwd: dir });
    expect((await rootsOf('my-grpc-app', 1)).map((r) => r.trace_name)).toEqual(['chat gpt-4o-mini']);
  });

  it('points the official clients at this server with the variables they read, and they are understood', async () => {
    // The clients are not in the registries this project installs from: what they send is in their
    // captured traffic. Each of their requests is sent to the base URL the README sets, with its key.
    const env = local(snippet('python-env'));
    const base = /^export PAREA_BASE_URL=(\S+)$/m.exec(env)![1]!;
    expect(/^export PAREA_API_KEY=(\S+)$/m.exec(env)![1]).toBe(key());
    for (const client of ['python', 'typescript']) {
      const captured = readFileSync(join(ROOT, 'test/conformance/wire', `${client}-client.jsonl`), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line));
      for (const request of captured) expect(request.path.startsWith('/api/svc/v1/')).toBe(true);
      const traceLog = captured.find((r) => r.method === 'POST' && r.path === '/api/svc/v1/trace_log');
      const project = `readme-${client}`;
      const res = await fetch(`${base}${traceLog.path.slice('/api/svc/v1'.length)}`, {
        method: 'POST',
        headers: { ...traceLog.headers, 'x-api-key': key() },
        body: JSON.stringify({ ...traceLog.body, project_uuid: undefined, project_name: project }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
    }
    // Both snippets are well-formed programs of their language, calling what the clients export.
    const python = snippet('python');
    await new Promise<void>((resolve, reject) => {
      const child = spawn('python3', ['-c', 'import ast, sys; ast.parse(sys.stdin.read())']);
      child.stdin.end(python);
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error('the Python snippet does not parse'))));
    });
    expect(python).toMatch(/from parea import Parea, trace/);
    const typescript = snippet('typescript');
    const { diagnostics } = ts.transpileModule(typescript, {
      reportDiagnostics: true,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    expect(diagnostics?.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
    expect(typescript).toMatch(/from 'parea-ai'/);
  });
});
