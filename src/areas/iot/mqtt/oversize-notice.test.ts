import { once } from 'node:events';
import { type AddressInfo, connect, createServer } from 'node:net';
import { PassThrough } from 'node:stream';
import type { Aedes } from 'aedes';
import mqttPacket, { type Packet } from 'mqtt-packet';
import { afterEach, expect, it } from 'vitest';
import { noticeOversizeAfterConnack } from './oversize-notice.js';

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/**
 * An aedes broker whose session queue is held open (as a slow store read would hold it) until
 * `release`: aedes reads the client's packets from its CONNACK on, but counts it connected only
 * once that queue is sent.
 */
async function brokerWithHeldQueue(notice: boolean) {
  const { Aedes } = await import('aedes');
  const broker: Aedes = await Aedes.createBroker({
    maximumPacketSize: 1024,
    preConnect: (client, _packet, done) => {
      if (notice) noticeOversizeAfterConnack(client);
      done(null, true);
    },
  });
  const queue = new PassThrough({ objectMode: true });
  const held = broker as unknown as { persistence: { outgoingStream: () => NodeJS.ReadableStream } };
  held.persistence.outgoingStream = () => queue;
  const server = createServer(broker.handle);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(
    () => new Promise((r) => server.close(r)),
    () => new Promise<void>((r) => broker.close(() => r())),
  );
  return { port: (server.address() as AddressInfo).port, release: () => queue.end() };
}

/** Connects with MQTT 5, sends an oversized PUBLISH as soon as the CONNACK is in, and answers what came back. */
async function publishTooLargeAtOnce(port: number): Promise<Packet[]> {
  const socket = connect(port, '127.0.0.1');
  const parser = mqttPacket.parser({ protocolVersion: 5 });
  const received: Packet[] = [];
  parser.on('packet', (p: Packet) => {
    received.push(p);
    if (p.cmd === 'connack')
      socket.write(
        mqttPacket.generate(
          { cmd: 'publish', topic: 't', payload: Buffer.alloc(4096), qos: 0, retain: false, dup: false },
          { protocolVersion: 5 },
        ),
      );
  });
  socket.on('data', (b) => parser.parse(b));
  socket.on('error', () => {});
  socket.write(
    mqttPacket.generate(
      { cmd: 'connect', protocolId: 'MQTT', protocolVersion: 5, clientId: 'c1', clean: true, keepalive: 30 },
      { protocolVersion: 5 },
    ),
  );
  await once(socket, 'close');
  return received;
}

it('answers a packet too large with DISCONNECT 0x95 from the CONNACK on, before the session queue is sent', async () => {
  const { port, release } = await brokerWithHeldQueue(true);
  const received = await publishTooLargeAtOnce(port);
  release();
  expect(received.map((p) => p.cmd)).toEqual(['connack', 'disconnect']);
  expect((received[1] as { reasonCode?: number }).reasonCode).toBe(0x95);
});

it('shows why: aedes alone drops that client without a word', async () => {
  const { port, release } = await brokerWithHeldQueue(false);
  const received = await publishTooLargeAtOnce(port);
  release();
  expect(received.map((p) => p.cmd)).toEqual(['connack']);
});
