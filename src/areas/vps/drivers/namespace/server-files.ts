import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { childrenOf, isLive } from './host.js';

// The files kept beside each server's disk, and how a running server is found from them, are a
// file of their own: both the driver's operations (namespace.ts) and the steps that bring a
// server up and down (power.ts) read them.

/** What the driver keeps beside each server's disk. */
export interface ServerMeta {
  id: string;
  hostname: string;
  template: string;
  plan_code: string;
  slot: number;
  /** The owner, whose private network the server is on (absent on disks made before it was kept). */
  customer?: string;
  /** The server's host id range (idmaps.ts); its upper layer's files are owned by that range. */
  id_range?: number;
}

/** The servers under one root: `<root>/<id>/server.json` (its record) and `pid` (its `unshare`). */
export class ServerFiles {
  constructor(private readonly root: string) {}

  dirOf(id: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`bad server id ${id}`);
    return join(this.root, id);
  }

  marker = (id: string) => `fjord-vps-${id}`;

  async meta(id: string): Promise<ServerMeta | null> {
    const text = await readFile(join(this.dirOf(id), 'server.json'), 'utf8').catch(() => null);
    return text ? (JSON.parse(text) as ServerMeta) : null;
  }

  async writeMeta(meta: ServerMeta): Promise<void> {
    await writeFile(join(this.dirOf(meta.id), 'server.json'), `${JSON.stringify(meta, null, 2)}\n`);
  }

  /** The live `unshare` of the server, or null. */
  async pidOf(id: string): Promise<number | null> {
    const pid = Number((await readFile(join(this.dirOf(id), 'pid'), 'utf8').catch(() => '')).trim());
    return pid > 0 && (await isLive(pid, this.marker(id))) ? pid : null;
  }

  /** The server's PID 1 on the host (the one child of its `unshare`), or null when it is down. */
  async initOf(id: string): Promise<number | null> {
    const pid = await this.pidOf(id);
    if (!pid) return null;
    const [init] = await childrenOf(pid);
    return init ?? null;
  }
}
