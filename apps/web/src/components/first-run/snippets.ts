/** What the guide fills every snippet with. */
export type SetupValues = {
  /** This server's origin, as the browser reached it: `http://127.0.0.1:8000`. */
  origin: string;
  /** The whole key, or the placeholder until there is one. */
  apiKey: string;
  projectName: string;
  /** The curl first trace's id, so that the person can find it. */
  traceId: string;
};

export const KEY_PLACEHOLDER = '<your API key>';

/** The official clients' base URL: the API's prefix included. */
export const apiBaseUrl = (origin: string) => `${origin}/api/svc/v1`;

/** `sl_…abcd`: the key's kind and its last four characters, as Settings lists keys. */
export const maskKey = (key: string) => `${key.slice(0, key.indexOf('_') + 1)}…${key.slice(-4)}`;

// As Python's shlex.quote: bare when nothing in it means anything to a shell, else in single quotes.
const shellWord = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`);
const jsString = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
// A JSON string is a valid Python string literal.
const pyString = (s: string) => JSON.stringify(s);

/** A JSON body for `curl -d '…'`, indented under the command (a JSON text holds no raw newline). */
const curlBody = (body: object) => shellWord(JSON.stringify(body, null, 2).replaceAll('\n', '\n  '));

const curl = (url: string, apiKey: string, body: object) => `curl -sS ${shellWord(url)} \\
  -H ${shellWord(`x-api-key: ${apiKey}`)} \\
  -H 'content-type: application/json' \\
  -d ${curlBody(body)}`;

/** The variables both official clients read, as shell lines. */
const clientEnv = ({ origin, apiKey }: SetupValues) =>
  `export PAREA_BASE_URL=${shellWord(apiBaseUrl(origin))}
export PAREA_API_KEY=${shellWord(apiKey)}`;

/** Each way in, as text to run: filled with this server's address, the key and the project. */
export function setupSnippets(v: SetupValues) {
  const base = apiBaseUrl(v.origin);
  return {
    pythonShell: `pip install parea-ai
${clientEnv(v)}`,
    python: `import os

from parea import Parea, trace

p = Parea(api_key=os.environ["PAREA_API_KEY"], project_name=${pyString(v.projectName)})


@trace
def answer(question: str) -> str:
    return f"You asked: {question}"


print(answer("What is Sightline?"))`,
    typescriptShell: `npm install parea-ai openai
${clientEnv(v)}`,
    typescript: `import OpenAI from 'openai';
import { Parea, patchOpenAI, trace } from 'parea-ai';

const p = new Parea(process.env.PAREA_API_KEY, ${jsString(v.projectName)});
const openai = new OpenAI();
patchOpenAI(openai); // each call becomes a span, with its messages, tokens and cost

const answer = trace('answer', async (question: string) => {
  const res = await openai.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: question }],
  });
  return res.choices[0].message.content;
});

answer('What is Sightline?').then(console.log);`,
    // No timestamps: the server stamps the trace when it arrives, so a snippet copied later is not stale. A
    // latency ends it there (without one, or an end, the trace view draws the span as still running).
    firstTrace: curl(`${base}/trace_log`, v.apiKey, {
      trace_id: v.traceId,
      project_name: v.projectName,
      trace_name: 'hello',
      inputs: { question: 'hi' },
      output: 'hello!',
      status: 'success',
      latency: 0.25,
    }),
    gateway: curl(`${base}/completion`, v.apiKey, {
      project_name: v.projectName,
      llm_configuration: {
        provider: 'openai',
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Say hello' }],
      },
    }),
    // The variable's values are percent-encoded (W3C baggage's format); a key needs none.
    otel: `# OTLP over HTTP (gRPC is not served); exporters add /v1/traces to the endpoint
export OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf
export OTEL_EXPORTER_OTLP_ENDPOINT=${shellWord(v.origin)}
# or, for traces alone:
# export OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=${shellWord(`${v.origin}/v1/traces`)}
export OTEL_EXPORTER_OTLP_HEADERS=${shellWord(
      `x-api-key=${v.apiKey},x-project-name=${encodeURIComponent(v.projectName)}`,
    )}`,
  };
}
