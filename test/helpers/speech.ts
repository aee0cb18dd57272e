import { execFile, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { scratchDir } from './scratch-dir.js';

const run = promisify(execFile);

/** A scratch directory for clips of one test file. */
export const clipDir = () => scratchDir('fjord-speech-test-');

/** Speech of `text` by flite's `rms` voice, in the container of `ext` (wav, mp3, ogg, mp4 with a video track). */
export function speak(dir: string, text: string, ext: 'wav' | 'mp3' | 'ogg' | 'mp4', name = 'clip'): string {
  const wav = join(dir, `${name}-source.wav`);
  execFileSync('flite', ['-voice', 'rms', '-t', text, '-o', wav]);
  if (ext === 'wav') return wav;
  const out = join(dir, `${name}.${ext}`);
  const ff = (args: string[]) => execFileSync('ffmpeg', ['-v', 'error', '-nostdin', '-y', ...args, out]);
  if (ext === 'mp4')
    ff([
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=160x120:rate=10',
      '-i',
      wav,
      '-shortest',
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
    ]);
  else
    ff([
      '-i',
      wav,
      ...(ext === 'mp3' ? ['-c:a', 'libmp3lame', '-b:a', '128k'] : ['-c:a', 'libvorbis', '-q:a', '6']),
    ]);
  return out;
}

/** A file with no audio: an image, or a silent video without an audio track. */
export function noAudio(dir: string, kind: 'png' | 'silent-mp4'): string {
  const out = join(dir, kind === 'png' ? 'image.png' : 'silent.mp4');
  const input =
    kind === 'png'
      ? ['-f', 'lavfi', '-i', 'testsrc=size=64x64', '-frames:v', '1']
      : ['-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=5', '-t', '1', '-pix_fmt', 'yuv420p'];
  execFileSync('ffmpeg', ['-v', 'error', '-nostdin', '-y', ...input, out]);
  return out;
}

/**
 * PUTs a file to a presigned address with curl, as a customer would; resolves to the HTTP status.
 * Asynchronous: the S3 listener answering it runs in the test's own process.
 */
export async function curlUpload(url: string, file: string): Promise<number> {
  const { stdout } = await run('curl', [
    '-s',
    '-o',
    '/dev/null',
    '-w',
    '%{http_code}',
    '--upload-file',
    file,
    url,
  ]);
  return Number(stdout);
}

const words = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z' ]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean);

/** Word accuracy, 1 − WER: one minus the word-level edit distance over the reference's word count. */
export function wordAccuracy(reference: string, hypothesis: string): number {
  const r = words(reference);
  const h = words(hypothesis);
  let prev = Array.from({ length: h.length + 1 }, (_, j) => j);
  for (let i = 1; i <= r.length; i++) {
    const row = [i];
    for (let j = 1; j <= h.length; j++)
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (r[i - 1] === h[j - 1] ? 0 : 1));
    prev = row;
  }
  return Math.max(0, 1 - prev[h.length]! / r.length);
}
