// The reference for bench/api.bench.ts: a bare Fastify server answering one small JSON object.
// It prints `listening <url>` once it accepts connections.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));

const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
process.stdout.write(`listening ${address}\n`);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    void app.close().finally(() => process.exit(0));
  });
}
