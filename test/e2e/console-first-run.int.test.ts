import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/fake-openai';
import { useConsole, type ConsolePerson } from '../support/console-browser';

// The first hour, in a real browser against the processes `npm start` runs: a person of a new organization
// signs in to an empty console, makes a key in the first-run guide, and the guide's snippets, copied from
// the page and run as written with bash, send a first trace (and a completion through the gateway, to a
// fake provider) that the console then shows.
const openai = new FakeOpenAI();
beforeAll(() => openai.start());
afterAll(() => openai.stop());
const session = useConsole('first-run-e2e', {
  env: () => ({ OPENAI_BASE_URL: openai.baseURL, OPENAI_API_KEY: 'sk-e2e' }),
});
let page: Page;
let person: ConsolePerson;
/** The key the guide made, as its copy button gives it. */
let key = '';

const run = promisify(execFile);
/** Runs a snippet's text as written, with bash; answers its standard output. */
const bash = async (script: string) => (await run('bash', ['-euo', 'pipefail', '-c', script])).stdout;

/** What a copy button of the page put on the clipboard. */
async function copy(name: string): Promise<string> {
  await page.getByRole('button', { name }).click();
  return page.evaluate<string>('navigator.clipboard.readText()');
}

beforeAll(async () => {
  page = session.page;
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: session.origin });
  person = await session.newPerson('admin', { password: `first-${randomUUID()}` });
}, 60_000);

describe('the first-run guide', { timeout: 90_000 }, () => {
  it('greets a new organization with a guide to this server that warns about the vendor', async () => {
    await session.signInAs(person);
    await page.getByRole('heading', { name: 'No traces yet: send your first one' }).waitFor();
    await page.getByText(`${session.api}`, { exact: true }).waitFor();
    const warning = page.getByRole('tabpanel', { name: 'Python' }).getByRole('alert');
    expect(await warning.textContent()).toMatch(/^Set PAREA_BASE_URL, or your traces leave this server/);
    expect(await page.getByRole('group', { name: 'Python setup' }).textContent()).toContain(
      `export PAREA_BASE_URL=${session.api}\nexport PAREA_API_KEY='<your API key>'`,
    );
    await session.shots('first-run');
    await session.expectIdle('the first-run guide');
    await session.checkA11y('first-run');
  });

  it('makes a key, shown masked, that every snippet carries whole when copied', async () => {
    await page.getByRole('button', { name: 'Create an API key' }).click();
    const shown = page.getByTestId('first-run-key');
    await shown.filter({ hasText: /^sl_…/ }).waitFor();
    key = await copy('Copy the API key');
    expect(key).toMatch(/^sl_[\w-]{43}$/);
    expect(await shown.textContent()).toBe(`sl_…${key.slice(-4)}`);
    expect(await page.getByRole('group', { name: 'Python setup' }).textContent()).not.toContain(key);
    expect(await copy('Copy the Python setup')).toContain(`export PAREA_API_KEY=${key}`);

    // The programs are well-formed in their language and call what the clients export.
    const python = await copy('Copy the Python program');
    await run('python3', ['-c', `import ast, sys; ast.parse(sys.argv[1])`, python]);
    expect(python).toContain('from parea import Parea, trace');
    await page.getByRole('tab', { name: 'TypeScript' }).click();
    const typescript = await copy('Copy the TypeScript program');
    const { diagnostics } = ts.transpileModule(typescript, {
      reportDiagnostics: true,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    expect(diagnostics?.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);

    await page.getByRole('tab', { name: 'curl (first trace)' }).click();
    await page.getByRole('group', { name: 'first-trace curl command' }).waitFor();
    await session.shots('first-run-key');
    await session.checkA11y('first-run-key');
    await page.getByRole('button', { name: 'Show the key' }).click();
    expect(await shown.textContent()).toBe(key);
    expect(await page.getByRole('group', { name: 'first-trace curl command' }).textContent()).toContain(key);
    await session.shot('first-run-key-revealed');
    await page.getByRole('tab', { name: 'OpenTelemetry' }).click();
    expect(await copy('Copy the OpenTelemetry variables')).toContain(
      `export OTEL_EXPORTER_OTLP_HEADERS=x-api-key=${key},x-project-name=my-app`,
    );
    await session.shot('first-run-otel');
  });

  it('sends a first trace with the curl snippet as written, and the console shows it', async () => {
    await page.getByRole('tab', { name: 'curl (first trace)' }).click();
    const curl = await copy('Copy the first-trace curl command');
    const traceId = /"trace_id": "([0-9a-f-]{36})"/.exec(curl)![1];
    expect(JSON.parse(await bash(curl))).toEqual({ trace_id: traceId, sampled: true });

    // The empty list is read again every 30 s; the person reloads rather than wait.
    await expect
      .poll(
        async () => {
          await page.reload();
          await page.getByRole('heading', { name: /^(Projects|No traces yet: send your first one)$/ }).waitFor();
          return page.getByRole('link', { name: 'my-app' }).count();
        },
        { timeout: 20_000 },
      )
      .toBe(1);
    await page.getByRole('link', { name: 'my-app' }).click();
    await page.getByRole('table', { name: 'Traces' }).getByRole('link', { name: 'hello' }).click();
    await page.waitForURL(new RegExp(`/traces/${traceId}`));
    await page.getByText('hello!').first().waitFor();
    // Ended: the snippet's latency, not a span drawn as still running.
    await page.getByText('250 ms', { exact: true }).first().waitFor();
    await session.shot('first-run-trace');
  });

  it('runs the gateway snippet as written, from an empty project, and the call shows live', async () => {
    const created = await fetch(`${session.api}/project`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'gateway-app' }),
    });
    expect(created.status, await created.clone().text()).toBe(200);
    const { uuid } = (await created.json()) as { uuid: string };
    await page.goto(`${session.origin}/projects/${uuid}/traces`);
    await page.getByRole('heading', { name: 'No traces in this project yet' }).waitFor();
    // The key made on the projects page was shown once: this guide makes another.
    await page.getByRole('button', { name: 'Create an API key' }).click();
    await page.getByTestId('first-run-key').waitFor();
    await page.getByRole('tab', { name: 'Gateway' }).click();
    const gateway = await copy('Copy the gateway curl command');
    expect(gateway).toContain('"project_name": "gateway-app"');
    await session.shots('first-run-gateway');
    const answer = JSON.parse(await bash(gateway));
    expect(answer).toMatchObject({ status: 'success', content: 'echo: Say hello', provider: 'openai' });
    await page.getByRole('table', { name: 'Traces' }).getByRole('link').first().waitFor({ timeout: 15_000 });
  });
});
