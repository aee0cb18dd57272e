import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { VpsPlan } from '../catalogue.js';
import type { ServerMetrics, ServerSpec, VpsDriver } from './driver.js';
import { readTar, type TarEntry, writeTar } from './tar.js';

/** What `fjord-backup.json` at the top of every backup archive says. */
export const BACKUP_FORMAT = 'fjord-vps-backup/1';
export interface BackupManifest {
  format: string;
  vps_id: string;
  hostname: string;
  os_template: string;
  plan_code: string;
  driver: string;
  taken_at: string;
}
/** The manifest of a backup of `spec` that `driver` takes now. */
export function manifestOf(spec: ServerSpec, driver: string): BackupManifest {
  return {
    format: BACKUP_FORMAT,
    vps_id: spec.id,
    hostname: spec.hostname,
    os_template: spec.osTemplate,
    plan_code: spec.plan.plan_code,
    driver,
    taken_at: new Date().toISOString(),
  };
}
/** The simulated disk is a handful of small files: an archive past this is not one of ours. */
const MAX_SIMULATED_ARCHIVE = 64 * 1024 * 1024;

/** A number in [0, 1) fixed by the text: the same server always gets the same timings and figures. */
function unit(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0) / 2 ** 32;
}
const between = (text: string, low: number, high: number) => Math.round(low + unit(text) * (high - low));

/**
 * Runs no server at all: for hosts that cannot make namespaces. Timings are the published ones
 * (provisioning 1-3 minutes, start 30-60 s, reboot 1-2 minutes, stop 10-30 s), chosen per server
 * from its id so tests can rely on them; metrics are plausible curves of the server's id and
 * uptime. Addresses come from the documentation ranges (203.0.113.0/24, 2001:db8::/32), which
 * route nowhere, so nobody mistakes them for a reachable server.
 *
 * Each server still has a small real disk, a directory under `root` (`<root>/<id>/disk`: its
 * host name, OS release, authorized keys, plan), so backups are real archives that really put
 * the disk back when restored.
 */
export class SimulatedVpsDriver implements VpsDriver {
  readonly name = 'simulated';
  readonly simulated = true;

  constructor(private readonly root: string) {}

  /** The directory that stands for the server's disk. */
  diskOf(id: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`bad server id ${id}`);
    return join(this.root, id, 'disk');
  }

  /** The disk as provisioning leaves it; made on first use when missing (another process's server). */
  private async ensureDisk(spec: ServerSpec): Promise<string> {
    const disk = this.diskOf(spec.id);
    if (
      await stat(disk).then(
        () => true,
        () => false,
      )
    )
      return disk;
    const files: Record<string, string> = {
      'etc/hostname': `${spec.hostname}\n`,
      'etc/os-release': `ID=${spec.osTemplate}\n`,
      'root/.ssh/authorized_keys': spec.publicKeys.map((k) => `${k}\n`).join(''),
      'var/lib/fjord/server.json': `${JSON.stringify({ id: spec.id, plan: spec.plan }, null, 2)}\n`,
      'README.simulated': "This disk is simulated: Fjord's simulated driver runs no machine.\n",
    };
    const temp = `${disk}.new-${randomBytes(4).toString('hex')}`;
    for (const [name, text] of Object.entries(files)) {
      await mkdir(join(temp, name, '..'), { recursive: true });
      await writeFile(join(temp, name), text, { mode: name.includes('.ssh') ? 0o600 : 0o644 });
    }
    await rename(temp, disk).catch(async (err) => {
      await rm(temp, { recursive: true, force: true });
      // Another call made it first: theirs stands.
      if (!(await stat(disk).catch(() => null))) throw err;
    });
    return disk;
  }

  private async entriesOf(dir: string, prefix: string): Promise<TarEntry[]> {
    const out: TarEntry[] = [];
    const names = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    for (const d of names) {
      const path = join(dir, d.name);
      const name = `${prefix}/${d.name}`;
      const st = await stat(path);
      const mtime = Math.floor(st.mtimeMs / 1000);
      if (d.isDirectory()) {
        out.push({ name, type: 'dir', mode: st.mode, mtime });
        out.push(...(await this.entriesOf(path, name)));
      } else if (d.isFile())
        out.push({ name, type: 'file', mode: st.mode, mtime, data: await readFile(path) });
    }
    return out;
  }

  offers(): boolean {
    return true;
  }
  async provision(spec: ServerSpec) {
    const n = between(`${spec.id}:ip`, 2, 254);
    return {
      seconds: between(`${spec.id}:provision`, 60, 180),
      ipv4: `203.0.113.${n}`,
      ipv6: `2001:db8::${n.toString(16)}`,
    };
  }
  async start(spec: ServerSpec) {
    return { seconds: between(`${spec.id}:start`, 30, 60) };
  }
  async stop(spec: ServerSpec) {
    return { seconds: between(`${spec.id}:stop`, 10, 30) };
  }
  async reboot(spec: ServerSpec) {
    return { seconds: between(`${spec.id}:reboot`, 60, 120) };
  }
  async destroy(id: string): Promise<void> {
    await rm(join(this.diskOf(id), '..'), { recursive: true, force: true });
  }
  async metrics(id: string, since: number, now: number, plan: VpsPlan): Promise<ServerMetrics> {
    const up = Math.max(0, (now - since) / 1000);
    const minute = Math.floor(now / 60_000);
    const wave = unit(`${id}:${minute}`);
    const round1 = (x: number) => Math.round(x * 10) / 10;
    return {
      cpu_usage_percent: round1(2 + wave * 18),
      memory_usage_percent: round1(20 + unit(`${id}:mem`) * 30 + wave * 5),
      disk_usage_percent: round1(Math.min(95, 5 + unit(`${id}:disk`) * 10 + up / 86_400 / plan.storage_gb)),
      network_in_bytes: Math.floor(up * (2_000 + unit(`${id}:in`) * 8_000)),
      network_out_bytes: Math.floor(up * (1_000 + unit(`${id}:out`) * 4_000)),
    };
  }
  async snapshot(id: string, name: string): Promise<number> {
    return between(`${id}:snap:${name}`, 400_000_000, 1_200_000_000);
  }
  async rollback(): Promise<void> {}
  async deleteSnapshot(): Promise<void> {}

  async backup(spec: ServerSpec): Promise<Readable> {
    const disk = await this.ensureDisk(spec);
    const manifest = manifestOf(spec, this.name);
    const now = Math.floor(Date.now() / 1000);
    const entries: TarEntry[] = [
      {
        name: 'fjord-backup.json',
        type: 'file',
        mode: 0o644,
        mtime: now,
        data: Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`),
      },
      { name: 'disk', type: 'dir', mode: 0o755, mtime: now },
      ...(await this.entriesOf(disk, 'disk')),
    ];
    return Readable.from([gzipSync(writeTar(entries))]);
  }

  async restore(spec: ServerSpec, archive: Readable): Promise<void> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of archive as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_SIMULATED_ARCHIVE) throw new Error('archive larger than any simulated disk');
      chunks.push(chunk);
    }
    const entries = readTar(gunzipSync(Buffer.concat(chunks)));
    const head = entries.find((e) => e.name === 'fjord-backup.json');
    const manifest = head?.data ? (JSON.parse(head.data.toString('utf8')) as BackupManifest) : null;
    if (manifest?.format !== BACKUP_FORMAT || manifest.vps_id !== spec.id)
      throw new Error('the archive is not a backup of this server');
    // Unpacked beside the disk, then swapped in: a failure halfway leaves the disk as it was.
    const disk = this.diskOf(spec.id);
    const temp = `${disk}.restore-${randomBytes(4).toString('hex')}`;
    try {
      await mkdir(temp, { recursive: true });
      for (const e of entries) {
        if (!e.name.startsWith('disk/')) continue;
        const path = join(temp, e.name.slice('disk/'.length));
        if (e.type === 'dir') await mkdir(path, { recursive: true, mode: e.mode & 0o777 });
        else {
          await mkdir(join(path, '..'), { recursive: true });
          await writeFile(path, e.data ?? Buffer.alloc(0), { mode: e.mode & 0o777 });
        }
      }
      const old = `${disk}.old-${randomBytes(4).toString('hex')}`;
      await rename(disk, old).catch(() => {});
      await rename(temp, disk);
      await rm(old, { recursive: true, force: true });
    } catch (err) {
      await rm(temp, { recursive: true, force: true });
      throw err;
    }
  }
}
