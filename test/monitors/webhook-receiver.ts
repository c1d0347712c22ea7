import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Received = {
  path: string;
  delivery: string;
  /** Whether `x-sightline-signature` is the HMAC of the raw body with the receiver's secret. */
  signed: boolean;
  body: any;
  at: number;
};

/**
 * A webhook receiver on 127.0.0.1, as a team would run one: it checks each request's signature against
 * its secret, and can be told to refuse (`failNext`) or to answer late (`slowNext`) the next requests.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  /** Every request, the refused and slow ones too. */
  attempts = 0;
  private failures = 0;
  private slow: { count: number; ms: number } = { count: 0, ms: 0 };
  private server: Server | null = null;

  constructor(readonly secret: string) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        this.attempts++;
        // Decided on arrival: a slow request that is to be refused counts as one of the refusals.
        const refuse = this.failures > 0 && this.failures-- > 0;
        if (this.slow.count > 0) {
          this.slow.count--;
          await new Promise((r) => setTimeout(r, this.slow.ms));
        }
        if (refuse) {
          res.writeHead(500).end('not now');
          return;
        }
        const raw = Buffer.concat(chunks);
        const expected = Buffer.from(`sha256=${createHmac('sha256', this.secret).update(raw).digest('hex')}`);
        const given = Buffer.from(String(req.headers['x-sightline-signature'] ?? ''));
        this.received.push({
          path: req.url ?? '',
          delivery: String(req.headers['x-sightline-delivery'] ?? ''),
          signed: given.length === expected.length && timingSafeEqual(given, expected),
          body: JSON.parse(raw.toString('utf8')),
          at: Date.now(),
        });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  failNext(n: number) {
    this.failures = n;
  }

  slowNext(n: number, ms: number) {
    this.slow = { count: n, ms };
  }

  /** What arrived at one path (a channel of its own), each delivery once however often it was sent. */
  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async stop() {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
