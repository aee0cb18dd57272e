import { open, readdir, stat, utimes } from 'node:fs/promises';
import type { PackCompactionResult } from '../data-plane-contract.js';
import { PACK_APPEND_MS, PACK_ENTRY_HEADER, type PackFiles, parsePackRef } from './drivers/pack-files.js';
import type { BlobRow, PackRefsRepo } from './pack-refs-repo.js';
import type { BlobPart } from './tables.js';

/**
 * A closed pack is compacted when less than this share of its bytes is still named by a row: its
 * live entries are copied out (at most half the pack, so reclaiming costs at most the space it
 * frees) and the pack goes. Higher would rewrite more for less; lower would leave more dead space.
 */
export const COMPACT_BELOW_LIVE = 0.5;
/**
 * How long a pack stays closed before compaction touches it, and how long it is kept once no row
 * names it: an append still being committed, or a GET that read a row just before its references
 * were switched, finds the pack still there.
 */
export const PACK_GRACE_MS = 3600_000;
/** At most this many bytes are copied per run, so one run stays short; the rest waits for the next. */
const MAX_COPY_BYTES_PER_RUN = 256 * 1024 * 1024;
/** Packs named by a part of an upload touched this recently wait: a Complete may be reading that part. */
const PART_QUIET_MS = 86_400_000;
/** Copies appended at once (they share the pack's fdatasyncs). */
const COPY_BATCH = 128;

interface ClosedPack {
  size: number;
  mtimeMs: number;
  /** Live entries: reference → bytes on disk (header included). */
  live: Map<string, number>;
  /** Named by a part of an upload touched in the last `PART_QUIET_MS`. */
  busy: boolean;
}

/**
 * Compaction of pack files, as log-structured object stores vacuum their volumes: a pack closed
 * for good (past its append window and a grace) whose live bytes are below `COMPACT_BELOW_LIVE`
 * has its live entries appended afresh (made durable like any append), then every row naming them
 * is switched, one compare-and-swap per row; the old pack is removed at a later run, once a scan
 * finds no row naming it and the switch is `PACK_GRACE_MS` old.
 *
 * What is live is read from the rows on every run (one scan of the object versions and parts, a
 * second one only when there is something to move), never from counters: it is the same after a
 * restart, in every process sharing the data dir, and whichever process runs the job. Two
 * processes compacting the same pack at once are safe: each row takes one copy, the other copy is
 * dead and swept later.
 *
 * A crash at any point loses nothing: the old pack stays until a later scan finds it unreferenced,
 * rows switched before the crash name copies that were durable first, and copies no row took are
 * removed by the orphan sweep.
 */
export class PackCompactor {
  /** When this process switched the rows away from a pack (on the packs' clock). */
  private readonly switched = new Map<string, number>();
  private running: Promise<PackCompactionResult> | null = null;

  constructor(
    private readonly packs: PackFiles,
    private readonly repo: PackRefsRepo,
    /** The wall clock other processes' packs and file times are read on. */
    private readonly wallNow: () => number = Date.now,
  ) {}

  /** One pass; a call while one runs shares it. */
  run(): Promise<PackCompactionResult> {
    this.running ??= this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async pass(): Promise<PackCompactionResult> {
    const done: PackCompactionResult = {
      packsCompacted: 0,
      entriesMoved: 0,
      bytesMoved: 0,
      rowsSwitched: 0,
      packsRemoved: 0,
      bytesFreed: 0,
      packsSkipped: 0,
    };
    this.packs.closeExpired();
    const closed = await this.closedPacks();
    if (closed.size === 0) return done;
    const now = this.packs.now();
    for await (const page of this.repo.rows()) {
      for (const row of page) {
        for (const part of JSON.parse(row.blob) as BlobPart[]) {
          const ref = parsePackRef(part.ref);
          const pack = ref && closed.get(ref.pack);
          if (!pack) continue;
          pack.live.set(part.ref, ref.length + PACK_ENTRY_HEADER);
          if (row.kind === 'part' && now - row.lastModified < PART_QUIET_MS) pack.busy = true;
        }
      }
    }
    const candidates = new Map<string, ClosedPack>();
    let budget = MAX_COPY_BYTES_PER_RUN;
    for (const [id, pack] of closed) {
      const liveBytes = [...pack.live.values()].reduce((a, b) => a + b, 0);
      if (pack.live.size === 0) {
        if (this.pastGrace(id, pack)) {
          this.packs.remove(id);
          this.switched.delete(id);
          done.packsRemoved++;
          done.bytesFreed += pack.size;
        }
      } else if (!pack.busy && liveBytes < pack.size * COMPACT_BELOW_LIVE && liveBytes <= budget) {
        budget -= liveBytes;
        candidates.set(id, pack);
      }
    }
    if (candidates.size === 0) return done;
    const moved = new Map<string, string>();
    for (const [id, pack] of [...candidates]) {
      const copies = await this.copyOut(id, [...pack.live.keys()]).catch(() => null);
      if (!copies) {
        // Copies already made are dead from the start; the orphan sweep removes them.
        candidates.delete(id);
        done.packsSkipped++;
        continue;
      }
      for (const [from, to] of copies) moved.set(from, to);
      done.packsCompacted++;
      done.entriesMoved += copies.size;
      done.bytesMoved += [...copies.keys()].reduce((n, r) => n + (parsePackRef(r)?.length ?? 0), 0);
    }
    // Marked before the first row is switched, so that a crash from here on still leaves the grace.
    await this.markSwitched(candidates.keys());
    const taken = new Set<string>();
    for await (const page of this.repo.rows([...candidates.keys()])) {
      for (const row of page) {
        const next = this.switchedParts(row, moved);
        if (!next) continue;
        if (await this.repo.switchBlobs(row, JSON.stringify(next))) {
          done.rowsSwitched++;
          for (const p of next) taken.add(p.ref);
        }
      }
    }
    // A copy no row took (the row was overwritten or deleted meanwhile) is dead from the start.
    for (const to of moved.values()) {
      const ref = parsePackRef(to);
      if (ref && !taken.has(to)) this.packs.delete(ref);
    }
    await this.markSwitched(candidates.keys());
    return done;
  }

  /**
   * Notes that rows are being switched away from these packs: the grace before their removal
   * counts from now. The files' modification time tells other processes (and the orphan sweep).
   */
  private async markSwitched(packs: Iterable<string>): Promise<void> {
    const at = this.packs.now();
    const wall = new Date(this.wallNow());
    for (const id of packs) {
      this.switched.set(id, at);
      await utimes(this.packs.pathOf(id), wall, wall).catch(() => {});
    }
  }

  /** Packs no process appends to any more, past the grace; their sizes. */
  private async closedPacks(): Promise<Map<string, ClosedPack>> {
    const closed = new Map<string, ClosedPack>();
    const current = this.packs.currentId;
    for (const name of await readdir(this.packs.dir).catch(() => [] as string[])) {
      if (name === current || !/^[0-9a-f-]{36}$/.test(name)) continue;
      const opened = this.packs.openedAt(name);
      // Another process's pack (or one of an earlier run) ages on the wall clock, the time in its id.
      const age = (opened.own ? this.packs.now() : this.wallNow()) - opened.at;
      if (!(age >= PACK_APPEND_MS + PACK_GRACE_MS)) continue;
      const st = await stat(this.packs.pathOf(name)).catch(() => null);
      if (st?.isFile())
        closed.set(name, { size: st.size, mtimeMs: st.mtimeMs, live: new Map(), busy: false });
    }
    return closed;
  }

  /** No row names the pack: removable once its switch (or its last write) is a grace old. */
  private pastGrace(id: string, pack: ClosedPack): boolean {
    const at = this.switched.get(id);
    if (at !== undefined) return this.packs.now() - at >= PACK_GRACE_MS;
    return this.wallNow() - pack.mtimeMs >= PACK_GRACE_MS;
  }

  /** Appends copies of a pack's live entries; resolves once they are durable, with old → new refs. */
  private async copyOut(pack: string, refs: string[]): Promise<Map<string, string>> {
    const copies = new Map<string, string>();
    const file = await open(this.packs.pathOf(pack), 'r');
    try {
      for (let i = 0; i < refs.length; i += COPY_BATCH) {
        const batch: Promise<void>[] = [];
        for (const from of refs.slice(i, i + COPY_BATCH)) {
          const ref = parsePackRef(from)!;
          const body = Buffer.allocUnsafe(ref.length);
          const { bytesRead } = await file.read(body, 0, ref.length, ref.offset);
          if (bytesRead !== ref.length) throw new Error(`packed blob cut short: ${from}`);
          batch.push(
            this.packs.append([body], ref.length).then((to) => {
              copies.set(from, to);
            }),
          );
        }
        await Promise.all(batch);
      }
    } finally {
      await file.close();
    }
    return copies;
  }

  /** The row's parts with moved references replaced, or null when it names none. */
  private switchedParts(row: BlobRow, moved: Map<string, string>): BlobPart[] | null {
    const parts = JSON.parse(row.blob) as BlobPart[];
    let changed = false;
    const next = parts.map((p) => {
      const to = moved.get(p.ref);
      if (to === undefined) return p;
      changed = true;
      return { ...p, ref: to };
    });
    return changed ? next : null;
  }
}
