import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { InternalObjects } from '../storage/service.js';

/** What a recording's MP4 came to, once in the internal bucket. */
export interface StoredMp4 {
  key: string;
  sizeBytes: number;
  durationMs: number;
}

/** The key of a recording's MP4 in the internal bucket. */
export const mp4Key = (customerId: string, eventId: string, sessionId: string) =>
  `${customerId}/${eventId}/${sessionId}.mp4`;

async function run(cmd: string, args: string[], feed?: (stdin: NodeJS.WritableStream) => Promise<void>) {
  const child = spawn(cmd, args, { stdio: [feed ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    err = (err + d.toString()).slice(-2000);
  });
  const exited = once(child, 'exit');
  const failed = once(child, 'error').then(([e]) => {
    throw e;
  });
  if (feed)
    await Promise.race([feed(child.stdin!), failed]).catch((e: NodeJS.ErrnoException) => {
      // ffmpeg may stop reading early (a broken stream): its exit code says what happened.
      if (e.code !== 'EPIPE') throw e;
    });
  const [code] = (await Promise.race([exited, failed])) as [number | null];
  if (code !== 0) throw new Error(`${cmd} exited with ${code}: ${err.trim()}`);
  return out;
}

/**
 * One encoder connection's HLS made an MP4 (`-c copy`: no re-encoding, so it costs about the time
 * to read and write the bytes), stored in the internal bucket. The segments are fed to ffmpeg one
 * after the other on its standard input — they are one continuous MPEG-TS stream — so the length
 * of the recording is never bound by a command line. Throws when ffmpeg cannot read the stream.
 */
export async function storeMp4(
  files: InternalObjects,
  key: string,
  dir: string,
  segments: string[],
  ffmpeg = 'ffmpeg',
): Promise<StoredMp4> {
  const out = join(dir, 'recording.mp4');
  try {
    await run(
      ffmpeg,
      [
        ...['-hide_banner', '-loglevel', 'error', '-y', '-f', 'mpegts', '-i', 'pipe:0'],
        // ADTS AAC in MPEG-TS must become raw AAC in MP4; faststart puts the index first so
        // players can start before the whole file is downloaded.
        ...['-map', '0', '-c', 'copy', '-bsf:a', 'aac_adtstoasc', '-movflags', '+faststart', out],
      ],
      async (stdin) => {
        for (const name of segments) {
          for await (const chunk of createReadStream(join(dir, name)))
            if (!stdin.write(chunk)) await once(stdin, 'drain');
        }
        stdin.end();
      },
    );
    const probed = await run('ffprobe', [
      ...['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', out],
    ]);
    const seconds = Number(probed.trim());
    if (!Number.isFinite(seconds) || (await stat(out)).size === 0) throw new Error('ffmpeg wrote no MP4');
    const { size } = await files.put(key, createReadStream(out), 'video/mp4');
    return { key, sizeBytes: size, durationMs: Math.round(seconds * 1000) };
  } finally {
    await rm(out, { force: true });
  }
}
