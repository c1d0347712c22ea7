import type { ServerResponse } from 'node:http';
import { answerFor, FakeServer, type Plan, type Recorded } from './fake-server';

/** Speaks Anthropic's messages protocol (JSON and SSE events, with usage). */
export class FakeAnthropic extends FakeServer {
  get baseURL() {
    return `http://127.0.0.1:${this.port}`;
  }

  protected async answer(req: Recorded, res: ServerResponse, plan: Plan) {
    const body = req.body;
    const pieces = answerFor(body.messages);
    const inputTokens = 9 * body.messages.length + (body.system ? 5 : 0);
    const usage = {
      input_tokens: inputTokens,
      ...(plan.cacheReadTokens && { cache_read_input_tokens: plan.cacheReadTokens, cache_creation_input_tokens: 0 }),
    };
    const tool = plan.toolUse ? { name: body.tools?.[0]?.name ?? 'tool', input: { city: 'Paris' } } : null;
    const message = {
      id: 'msg_fake',
      type: 'message',
      role: 'assistant',
      model: body.model,
      stop_reason: null,
      stop_sequence: null,
    };
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      const content = tool
        ? [{ type: 'tool_use', id: 'toolu_fake', ...tool }]
        : [{ type: 'text', text: pieces.join('') }];
      res.end(
        JSON.stringify({
          ...message,
          stop_reason: tool ? 'tool_use' : 'end_turn',
          content,
          usage: { ...usage, output_tokens: pieces.length },
        }),
      );
      return;
    }
    await this.writeSse(
      res,
      [
        {
          event: 'message_start',
          data: { type: 'message_start', message: { ...message, content: [], usage: { ...usage, output_tokens: 1 } } },
        },
        ...(tool
          ? [
              {
                event: 'content_block_start',
                data: {
                  type: 'content_block_start',
                  index: 0,
                  content_block: { type: 'tool_use', id: 'toolu_fake', name: tool.name, input: {} },
                },
              },
              ...['{"city"', ': "Paris"}'].map((partial_json) => ({
                event: 'content_block_delta',
                data: { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json } },
              })),
            ]
          : [
              {
                event: 'content_block_start',
                data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
              },
              ...pieces.map((text) => ({
                event: 'content_block_delta',
                data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
              })),
            ]),
        { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
        {
          event: 'message_delta',
          data: {
            type: 'message_delta',
            delta: { stop_reason: 'end_turn', stop_sequence: null },
            usage: { output_tokens: pieces.length },
          },
        },
        { event: 'message_stop', data: { type: 'message_stop' } },
      ],
      plan,
    );
  }
}
