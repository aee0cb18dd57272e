// The reference for bench/s3.bench.ts: plain node:http streaming request bodies to a file and
// files back out, with nothing else — the ceiling a data plane on the same disk could reach.
// With --fsync it fdatasyncs each file before answering, as a durable store must.
import { createReadStream, mkdtempSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

const fsync = process.argv.includes('--fsync');
const dir = mkdtempSync(join(tmpdir(), 'fjord-ref-'));
const pathOf = (url) => join(dir, encodeURIComponent(url.split('?')[0]));
const server = http.createServer(async (req, res) => {
  try {
    if (req.method === 'PUT') {
      const file = await open(pathOf(req.url), 'w');
      for await (const chunk of req) await file.write(chunk);
      if (fsync) await file.datasync();
      await file.close();
      res.end();
    } else {
      const p = pathOf(req.url);
      res.setHeader('content-length', statSync(p).size);
      await pipeline(createReadStream(p, { highWaterMark: 1 << 20 }), res);
    }
  } catch {
    res.statusCode = 404;
    res.end();
  }
});
server.listen(0, '127.0.0.1', () =>
  process.stdout.write(`READY http://127.0.0.1:${server.address().port}\n`),
);
