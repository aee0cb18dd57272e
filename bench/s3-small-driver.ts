/**
 * Drives 4 KiB PUTs from 16 keep-alive clients at one endpoint for a few seconds and prints ops/s:
 * a load for profiling the PUT path (`node --cpu-prof --import tsx bench/s3-server.ts`).
 * Usage: node --import tsx bench/s3-small-driver.ts <endpoint> [seconds] [clients]
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { signRequest, UNSIGNED_PAYLOAD } from '../src/areas/storage/s3/sigv4.js';

const endpoint = new URL(process.argv[2]!);
const seconds = Number(process.argv[3] ?? 5);
const clients = Number(process.argv[4] ?? 16);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const body = randomBytes(4096);

function put(path: string): Promise<void> {
  const headers = signRequest({
    method: 'PUT',
    path,
    query: '',
    headers: { host: endpoint.host, 'content-length': String(body.length) },
    accessKeyId: 'AKBENCH',
    secret: 'secret-AKBENCH',
    region: 'eu-north-1',
    nowMs: Date.now(),
    payloadHash: UNSIGNED_PAYLOAD,
  });
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: endpoint.hostname, port: endpoint.port, method: 'PUT', path, headers, agent },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const deadline = performance.now() + seconds * 1000;
let ops = 0;
await Promise.all(
  Array.from({ length: clients }, async (_, c) => {
    let i = 0;
    while (performance.now() < deadline) {
      await put(`/bench/small-${c}-${i++ % 50}`);
      ops++;
    }
  }),
);
console.log(`${(ops / seconds).toFixed(1)} PUT/s`);
agent.destroy();
