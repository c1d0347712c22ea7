import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { KEY_PLACEHOLDER, maskKey, setupSnippets } from './snippets';

const KEY = 'sl_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';
const values = { origin: 'http://10.0.0.5:8000', apiKey: KEY, projectName: 'my-app', traceId: 'a-trace-id' };

/** The arguments bash passes to curl when it runs the snippet as written. */
function curlArguments(snippet: string): string[] {
  const printed = execFileSync('bash', ['-c', `curl() { printf '%s\\0' "$@"; }\n${snippet}`], { encoding: 'utf8' });
  return printed.split('\0').slice(0, -1);
}

describe('the first-run snippets', () => {
  it('point the official clients here with the variables they read', () => {
    const s = setupSnippets(values);
    for (const shell of [s.pythonShell, s.typescriptShell]) {
      expect(shell).toContain('export PAREA_BASE_URL=http://10.0.0.5:8000/api/svc/v1\n');
      expect(shell).toContain(`export PAREA_API_KEY=${KEY}`);
    }
    expect(s.python).toContain('p = Parea(api_key=os.environ["PAREA_API_KEY"], project_name="my-app")');
    expect(s.typescript).toContain("const p = new Parea(process.env.PAREA_API_KEY, 'my-app');");
  });

  it('send a first trace that bash and the API read as written, with no timestamp to go stale', () => {
    const args = curlArguments(setupSnippets({ ...values, projectName: `Ada's "bot"` }).firstTrace);
    expect(args.slice(0, 6)).toEqual([
      '-sS',
      'http://10.0.0.5:8000/api/svc/v1/trace_log',
      '-H',
      `x-api-key: ${KEY}`,
      '-H',
      'content-type: application/json',
    ]);
    expect(args[6]).toBe('-d');
    expect(JSON.parse(args[7]!)).toEqual({
      trace_id: 'a-trace-id',
      project_name: `Ada's "bot"`,
      trace_name: 'hello',
      inputs: { question: 'hi' },
      output: 'hello!',
      status: 'success',
      latency: 0.25,
    });
  });

  it('call the gateway with an inline configuration', () => {
    const args = curlArguments(setupSnippets(values).gateway);
    expect(args[1]).toBe('http://10.0.0.5:8000/api/svc/v1/completion');
    expect(JSON.parse(args.at(-1)!)).toMatchObject({
      project_name: 'my-app',
      llm_configuration: { provider: 'openai', model: 'gpt-4o-mini' },
    });
  });

  it('set the standard OpenTelemetry variables, the project percent-encoded', () => {
    const env = execFileSync('bash', ['-c', `${setupSnippets({ ...values, projectName: 'my app' }).otel}\nenv`], {
      encoding: 'utf8',
    });
    expect(env).toContain('OTEL_EXPORTER_OTLP_ENDPOINT=http://10.0.0.5:8000\n');
    expect(env).toContain(`OTEL_EXPORTER_OTLP_HEADERS=x-api-key=${KEY},x-project-name=my%20app\n`);
    expect(env).toContain('OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf\n');
    expect(setupSnippets(values).otel).toContain(
      '# export OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://10.0.0.5:8000/v1/traces',
    );
  });

  it('quote the placeholder, so that a snippet pasted before a key is made fails at the API, not in the shell', () => {
    const env = execFileSync(
      'bash',
      [
        '-c',
        `${setupSnippets({ ...values, apiKey: KEY_PLACEHOLDER })
          .pythonShell.split('\n')
          .slice(1)
          .join('\n')}\nenv`,
      ],
      {
        encoding: 'utf8',
      },
    );
    expect(env).toContain(`PAREA_API_KEY=${KEY_PLACEHOLDER}\n`);
  });

  it('mask a key to its kind and last four characters', () => {
    expect(maskKey(KEY)).toBe('sl_…DEFG');
  });
});
