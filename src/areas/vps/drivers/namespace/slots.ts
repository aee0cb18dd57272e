/**
 * Network slots: which /30 and loopback address each namespace server holds, shared by every
 * Fjord on the machine through directories under /run. Apart from the driver because it is the
 * one piece of state several processes share.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { SLOTS } from './host.js';

const SLOT_DIR = '/run/fjord-vps/slots';

/**
 * A network slot (the server's /30 and loopback address) held for this server across every
 * Fjord on the machine: a directory per slot under /run, naming its owner. A slot whose owner
 * is gone is free again.
 */
export async function reserveSlot(
  log: Logger,
  id: string,
  owner: string,
  preferred?: number,
): Promise<number> {
  await mkdir(SLOT_DIR, { recursive: true });
  const start = preferred ?? createHash('sha256').update(id).digest().readUInt32BE(0) % SLOTS;
  for (let i = 0; i < SLOTS; i++) {
    const slot = (start + i) % SLOTS;
    const path = join(SLOT_DIR, String(slot));
    const ownerFile = join(path, 'owner');
    try {
      await mkdir(path);
      await writeFile(ownerFile, owner);
      return slot;
    } catch {
      const current = await readFile(ownerFile, 'utf8').catch(() => null);
      if (current === owner) return slot;
      if (current !== null && !existsSync(join(current, 'server.json'))) {
        await writeFile(ownerFile, owner);
        return slot;
      }
    }
    if (preferred !== undefined)
      log.warn({ vps: id, slot }, 'the server network slot is taken by another server; it gets a new one');
  }
  throw new Error('no free network slot for a server');
}

export async function releaseSlot(owner: string): Promise<void> {
  const meta = await readFile(join(owner, 'server.json'), 'utf8').catch(() => null);
  if (!meta) return;
  const path = join(SLOT_DIR, String((JSON.parse(meta) as { slot: number }).slot));
  if ((await readFile(join(path, 'owner'), 'utf8').catch(() => null)) === owner)
    await rm(path, { recursive: true, force: true });
}
