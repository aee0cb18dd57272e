import { connect, type Socket } from 'node:net';
import mqttPacket, { type Packet } from 'mqtt-packet';

/**
 * A bare MQTT connection (3.1.1 unless told 5) that sends exactly the packets a test writes (duplicates with
 * DUP set, a PUBREL held back) and collects every packet the broker sends.
 */
export class RawMqtt {
  readonly received: Packet[] = [];
  private waiters: { match: (p: Packet) => boolean; resolve: (p: Packet) => void }[] = [];
  private constructor(
    readonly socket: Socket,
    readonly protocolVersion: 4 | 5,
  ) {
    const parser = mqttPacket.parser({ protocolVersion });
    parser.on('packet', (p: Packet) => {
      this.received.push(p);
      const i = this.waiters.findIndex((w) => w.match(p));
      if (i >= 0) this.waiters.splice(i, 1)[0]!.resolve(p);
    });
    socket.on('data', (chunk) => parser.parse(chunk));
  }

  static async open(
    port: number,
    /** The CONNECT's fields: a login, and for MQTT 5 its properties if any. */
    login: {
      username: string;
      password: string;
      clientId: string;
      clean?: boolean;
      properties?: Record<string, unknown>;
    },
    protocolVersion: 4 | 5 = 4,
  ) {
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const raw = new RawMqtt(socket, protocolVersion);
    const connack = raw.next((p) => p.cmd === 'connack');
    raw.send({
      cmd: 'connect',
      protocolId: 'MQTT',
      protocolVersion,
      clean: true,
      keepalive: 30,
      ...login,
    });
    const ack = (await connack) as { returnCode?: number; reasonCode?: number };
    if ((ack.returnCode ?? ack.reasonCode) !== 0)
      throw new Error(`CONNACK ${ack.returnCode ?? ack.reasonCode}`);
    return raw;
  }

  send(packet: Record<string, unknown>) {
    this.socket.write(
      mqttPacket.generate(packet as unknown as Packet, { protocolVersion: this.protocolVersion }),
    );
  }

  /** The next packet (from now on) that `match` accepts. */
  next(match: (p: Packet) => boolean): Promise<Packet> {
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** Resolves when the broker closes the connection. */
  closed(): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.destroyed || this.socket.readableEnded) return resolve();
      this.socket.once('close', () => resolve());
    });
  }

  close() {
    this.socket.destroy();
  }
}
