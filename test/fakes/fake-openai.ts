import type { ServerResponse } from 'node:http';
import { answerFor, FakeServer, type Plan, type Recorded } from './fake-server';

/** Speaks OpenAI's chat completions protocol (JSON and SSE, with usage), also under Azure's deployment paths. */
export class FakeOpenAI extends FakeServer {
  get baseURL() {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  protected async answer(req: Recorded, res: ServerResponse, plan: Plan) {
    const body = req.body;
    const pieces = answerFor(body.messages);
    const usage = {
      prompt_tokens: 7 * body.messages.length,
      completion_tokens: pieces.length,
      total_tokens: 7 * body.messages.length + pieces.length,
    };
    const model = body.model ?? 'azure-deployment';
    const base = { id: 'chatcmpl-fake', object: 'chat.completion', created: 1767225600, model };
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (plan.stallAfterChunks !== undefined) {
        res.write('{"id":"chatcmpl-fake",');
        return this.stall(res);
      }
      res.end(
        JSON.stringify({
          ...base,
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: pieces.join('') } }],
          ...(!plan.noUsage && { usage }),
        }),
      );
      return;
    }
    const chunk = (delta: object, finish: string | null = null) => ({
      ...base,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    await this.writeSse(
      res,
      [
        { data: chunk({ role: 'assistant', content: '' }) },
        ...pieces.map((p) => ({ data: chunk({ content: p }) })),
        { data: chunk({}, 'stop') },
        ...(body.stream_options?.include_usage && !plan.noUsage
          ? [{ data: { ...base, object: 'chat.completion.chunk', choices: [], usage } }]
          : []),
        { data: '[DONE]' },
      ],
      plan,
    );
  }
}
