// The floor of Node's UDP path for bench:dns: answers every query with its own bytes and QR set,
// with no DNS work at all. What Fjord's server costs above this is its own.
import { createSocket } from 'node:dgram';

const s = createSocket('udp4');
s.on('message', (m, r) => {
  const out = Buffer.allocUnsafe(m.length);
  m.copy(out);
  out[2] |= 0x80;
  s.send(out, r.port, r.address);
});
s.bind(0, '127.0.0.1', () => console.log('listening', s.address().port));
