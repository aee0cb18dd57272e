import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** One segment of a session's playlist: its file name and duration in seconds. */
export interface Segment {
  file: string;
  seconds: number;
}

/** The segments of a playlist ffmpeg wrote, in order (tags other than `#EXTINF` are dropped). */
export function parseSegments(playlist: string): Segment[] {
  const out: Segment[] = [];
  let pending: number | null = null;
  for (const line of playlist.split('\n').map((l) => l.trim())) {
    const m = /^#EXTINF:([\d.]+)/.exec(line);
    if (m) pending = Number(m[1]);
    else if (line && !line.startsWith('#') && pending !== null) {
      out.push({ file: line, seconds: pending });
      pending = null;
    }
  }
  return out;
}

export async function sessionSegments(sessionsDir: string, sessionId: string): Promise<Segment[]> {
  return parseSegments(await readFile(join(sessionsDir, sessionId, 'index.m3u8'), 'utf8').catch(() => ''));
}

export interface PlaylistPart {
  sessionId: string;
  segments: Segment[];
}

/**
 * One playlist over several encoder connections of an event: each connection's segments named
 * `{session_id}/{file}`, with `#EXT-X-DISCONTINUITY` where one connection's stream gives way to the
 * next (their timestamps and encoder settings restart). `vod` makes a replay (`PLAYLIST-TYPE:VOD`
 * and `ENDLIST`); `ended` alone closes a live playlist that will not grow any more. `query` (e.g.
 * `?grant=…`) is appended to every segment so players need nothing else.
 */
export function joinPlaylist(parts: PlaylistPart[], opts: { vod: boolean; ended: boolean; query: string }) {
  const all = parts.flatMap((p) => p.segments);
  const target = Math.max(1, ...all.map((s) => Math.ceil(s.seconds)));
  const lines = ['#EXTM3U', '#EXT-X-VERSION:3', `#EXT-X-TARGETDURATION:${target}`, '#EXT-X-MEDIA-SEQUENCE:0'];
  if (opts.vod) lines.push('#EXT-X-PLAYLIST-TYPE:VOD');
  let first = true;
  for (const part of parts) {
    if (part.segments.length === 0) continue;
    if (!first) lines.push('#EXT-X-DISCONTINUITY');
    first = false;
    for (const s of part.segments)
      lines.push(`#EXTINF:${s.seconds.toFixed(6)},`, `${part.sessionId}/${s.file}${opts.query}`);
  }
  if (opts.vod || opts.ended) lines.push('#EXT-X-ENDLIST');
  return `${lines.join('\n')}\n`;
}
