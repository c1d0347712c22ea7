// The ingest ceiling: a bare Fastify route that parses the same JSON body and discards it. Same body
// limit as the API; no auth, no validation, no Redis. Prints "listening" when ready.
import Fastify from 'fastify';

const app = Fastify({ bodyLimit: 10 * 1024 * 1024 });
app.post('/api/svc/v1/trace_log', async () => ({ ok: true }));
app.post('/api/svc/v1/trace_logs/batch', async () => ({ ok: true }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
console.log('listening');
