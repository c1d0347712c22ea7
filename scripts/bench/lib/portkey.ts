// Portkey's open-source gateway, started as `npx @portkey-ai/gateway` would run it, for the gateway benchmarks.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { freePort, ROOT, waitForHttp } from './stack';

/**
 * Portkey 1.15.2 cannot stream on the @hono/node-server it installs with (1.19): it appends its
 * x-portkey-* headers to a Response built over the upstream fetch() response, and node-server's
 * lightweight Response keeps that response's immutable Headers, so every streamed call fails with
 * "TypeError: immutable" (500). This preload gives upstream event streams fresh, mutable headers before
 * Portkey sees them (Node's own Response, captured before node-server replaces the global). JSON answers
 * are left as they come, so the non-streaming path runs exactly as shipped. (Its postinstall
 * `patch-package` changes nothing: the package ships no patches/ folder.)
 */
const PORTKEY_STREAM_SHIM =
  'data:text/javascript,' +
  encodeURIComponent(
    'const f=globalThis.fetch,R=globalThis.Response;' +
      "globalThis.fetch=async(...a)=>{const r=await f(...a);return (r.headers.get('content-type')||'').startsWith('text/event-stream')?new R(r.body,{status:r.status,statusText:r.statusText,headers:r.headers}):r};",
  );

/** Portkey's gateway as `npx @portkey-ai/gateway` would run it: its published bin, in its own process. */
export async function startPortkey(): Promise<{ base: string; child: ChildProcess; stderr: () => string }> {
  const dir = `${ROOT}/node_modules/@portkey-ai/gateway`;
  const { bin } = JSON.parse(readFileSync(`${dir}/package.json`, 'utf8')) as { bin: string | Record<string, string> };
  const script = typeof bin === 'string' ? bin : Object.values(bin)[0];
  const port = await freePort();
  // Headless: no bundled web UI or its log stream; the gateway routes are the same.
  const child = spawn(
    process.execPath,
    ['--import', PORTKEY_STREAM_SHIM, `${dir}/${script}`, `--port=${port}`, '--headless'],
    { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  // A benchmark that fails must not leave Portkey running.
  process.once('exit', () => child.exitCode === null && child.kill('SIGKILL'));
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`portkey exited with ${code}: ${stderr}`))),
  );
  exited.catch(() => {});
  await Promise.race([waitForHttp(`http://127.0.0.1:${port}/`), exited]);
  return { base: `http://127.0.0.1:${port}`, child, stderr: () => stderr };
}
