import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

export type Recorded = {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
  at: number;
  /** When the answer ended: sent whole, or its connection closed by the client (a stalled one's end). */
  endedAt?: number;
};

/** What the next requests should meet: failures by status, a hang, a stream that breaks part-way. */
export type Plan = {
  status?: number;
  /** Sent with a planned failure's status: Retry-After (seconds) and retry-after-ms. */
  retryAfter?: string;
  retryAfterMs?: string;
  hangMs?: number;
  breakAfterChunks?: number;
  /** Sends the headers (and this many stream events) and then nothing more, keeping the connection open. */
  stallAfterChunks?: number;
  noUsage?: boolean;
  toolUse?: boolean;
  cacheReadTokens?: number;
};

/**
 * Shared plumbing of the fake LLM providers: a real HTTP server on 127.0.0.1 that records every request
 * and follows a queue of planned failures before answering normally.
 */
export abstract class FakeServer {
  readonly requests: Recorded[] = [];
  private plans: Plan[] = [];
  private server: Server | null = null;
  chunkDelayMs = 5;
  /** Added before every answer: a slower provider. */
  responseDelayMs = 0;
  /** A provider's concurrency limit: requests beyond it are refused with this status and Retry-After. */
  admit: { concurrent: number; status?: number; retryAfter?: string } | null = null;
  /** Requests being answered now, the most there ever were at once, and the refusals of `admit`. */
  inFlight = 0;
  maxInFlight = 0;
  refused = 0;
  port = 0;

  protected abstract answer(req: Recorded, res: ServerResponse, plan: Plan): Promise<void>;

  /** The next `times` requests follow `plan`. */
  plan(plan: Plan, times = 1): this {
    for (let i = 0; i < times; i++) this.plans.push(plan);
    return this;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    let text = '';
    for await (const part of req) text += part;
    const recorded: Recorded = {
      path: req.url ?? '',
      headers: req.headers,
      body: text ? JSON.parse(text) : null,
      at: Date.now(),
    };
    this.requests.push(recorded);
    if (this.admit && this.inFlight >= this.admit.concurrent) {
      this.refused++;
      const { status = 429, retryAfter } = this.admit;
      return this.fail(res, { status, retryAfter });
    }
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      const plan = this.plans.shift() ?? {};
      if (plan.hangMs) await sleep(plan.hangMs);
      if (this.responseDelayMs) await sleep(this.responseDelayMs);
      if (plan.status) return this.fail(res, plan);
      await this.answer(recorded, res, plan);
    } finally {
      this.inFlight--;
      recorded.endedAt = Date.now();
    }
  }

  private fail(res: ServerResponse, { status, retryAfter, retryAfterMs }: Plan) {
    res.writeHead(status!, {
      'content-type': 'application/json',
      ...(retryAfter && { 'retry-after': retryAfter }),
      ...(retryAfterMs && { 'retry-after-ms': retryAfterMs }),
    });
    res.end(JSON.stringify({ error: { type: 'fake_error', message: `planned failure ${status}` } }));
  }

  /** Keeps the connection open without another byte until the client gives up. */
  protected stall(res: ServerResponse): Promise<void> {
    return new Promise<void>((resolve) => res.on('close', () => resolve()));
  }

  protected async writeSse(res: ServerResponse, events: { event?: string; data: unknown }[], plan: Plan) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let sent = 0;
    for (const e of events) {
      if (plan.breakAfterChunks !== undefined && sent >= plan.breakAfterChunks) {
        res.destroy();
        return;
      }
      if (plan.stallAfterChunks !== undefined && sent >= plan.stallAfterChunks) return this.stall(res);
      res.write(
        `${e.event ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`,
      );
      sent++;
      await sleep(this.chunkDelayMs);
    }
    res.end();
  }
}

export { sleep };

/** The deterministic answer of the fakes: the last user message, echoed back, split into word chunks. */
export function answerFor(messages: { role: string; content: unknown }[]): string[] {
  const last = [...messages].reverse().find((m) => m.role === 'user');
  const text = `echo: ${typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '')}`;
  return text.split(/(?<= )/);
}
