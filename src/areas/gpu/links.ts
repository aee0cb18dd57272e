import type { SecretBox } from '../../kernel/secrets.js';

/**
 * Signed addresses for output files, sealed with the data key (so they can be neither read nor
 * forged): a download link opens one file until it expires; an upload link lets one worker PUT
 * one file of a stated size and type into the job it holds.
 */
export type Link =
  | { k: 'down'; j: string; n: string; e: number }
  | { k: 'up'; j: string; n: string; e: number; w: string; s: number; t: string };

export const sealLink = (secrets: SecretBox, link: Link): string =>
  Buffer.from(secrets.seal(JSON.stringify(link))).toString('base64url');

/** The link's claims when `token` is a link of this kind for this file, unexpired; else null. */
export function openLink<K extends Link['k']>(
  secrets: SecretBox,
  token: string,
  kind: K,
  jobId: string,
  name: string,
  now: number,
): Extract<Link, { k: K }> | null {
  let link: Link;
  try {
    link = JSON.parse(secrets.open(Buffer.from(token, 'base64url').toString('utf8'))) as Link;
  } catch {
    return null;
  }
  if (link.k !== kind || link.j !== jobId || link.n !== name || link.e < now) return null;
  return link as Extract<Link, { k: K }>;
}

const TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  mp4: 'video/mp4',
  webm: 'video/webm',
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  json: 'application/json',
  txt: 'text/plain; charset=utf-8',
  vtt: 'text/vtt',
  srt: 'application/x-subrip',
};

/** The media type a download is served with, from the output's name. */
export const contentTypeOf = (name: string): string =>
  TYPES[name.slice(name.lastIndexOf('.') + 1).toLowerCase()] ?? 'application/octet-stream';
