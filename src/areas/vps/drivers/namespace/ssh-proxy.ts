import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * Port 22 of each server's loopback address (127.213.x.y), forwarded to port 22 of the server
 * itself: what customers of a one-machine install `ssh` to. A plain TCP relay; it runs in the
 * Fjord process, so it is back as soon as Fjord is (the servers keep running meanwhile, and
 * stay reachable on their own 10.213.x.y address).
 */
export class SshForwards {
  private readonly servers = new Map<string, { server: Server; sockets: Set<Socket> }>();

  constructor(
    private readonly port: number,
    private readonly onError: (id: string, err: Error) => void,
  ) {}

  async open(id: string, listenAddress: string, target: string): Promise<void> {
    if (this.servers.has(id)) return;
    const sockets = new Set<Socket>();
    const server = createServer((client) => {
      const upstream = createConnection({ host: target, port: 22 });
      sockets.add(client);
      sockets.add(upstream);
      const done = () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on('error', done).on('close', done);
      upstream.on('error', done).on('close', done);
      client.pipe(upstream).pipe(client);
    });
    this.servers.set(id, { server, sockets });
    await new Promise<void>((resolve) => {
      server.once('error', (err) => {
        // Another Fjord on this data dir forwards it already, or the port is taken: the server
        // stays reachable on its own address; say so once.
        this.servers.delete(id);
        this.onError(id, err);
        resolve();
      });
      server.listen({ host: listenAddress, port: this.port }, () => resolve());
    });
  }

  async close(id: string): Promise<void> {
    const entry = this.servers.get(id);
    if (!entry) return;
    this.servers.delete(id);
    for (const s of entry.sockets) s.destroy();
    await new Promise<void>((resolve) => entry.server.close(() => resolve()));
  }

  async closeAll(): Promise<void> {
    for (const id of [...this.servers.keys()]) await this.close(id);
  }
}
