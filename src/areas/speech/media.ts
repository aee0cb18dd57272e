import { spawn } from 'node:child_process';

/** Why an upload cannot be transcribed, in words the customer can act on; null when it can. */
export async function audioProblem(path: string): Promise<string | null> {
  let out: string;
  try {
    out = await runTool('ffprobe', [
      '-v',
      'error',
      '-show_entries',
      'stream=codec_type:format=format_name',
      '-of',
      'json',
      path,
    ]);
  } catch {
    return 'The file is not a media file ffprobe can read (accepted: MP3, WAV, M4A, OGG, FLAC, WEBM, MP4, …).';
  }
  const probe = JSON.parse(out) as { streams?: { codec_type?: string }[]; format?: { format_name?: string } };
  const streams = probe.streams ?? [];
  // Still images are "video" streams of an image format: they are no recording either.
  if (
    /(^|,)(image2|png_pipe|jpeg_pipe|webp_pipe|gif|bmp_pipe|tiff_pipe)(,|$)/.test(
      probe.format?.format_name ?? '',
    )
  )
    return 'The file is an image, not a recording.';
  if (!streams.some((s) => s.codec_type === 'audio'))
    return streams.length
      ? 'The file has no audio stream.'
      : 'The file is not a media file (no streams found).';
  return null;
}

/** Decodes the first audio stream of any container to 16 kHz mono 16-bit WAV; resolves to its duration in seconds. */
export async function normalise(input: string, output: string): Promise<number> {
  await runTool('ffmpeg', [
    '-v',
    'error',
    '-nostdin',
    '-y',
    '-i',
    input,
    '-map',
    '0:a:0',
    '-vn',
    '-ac',
    '1',
    '-ar',
    '16000',
    '-c:a',
    'pcm_s16le',
    output,
  ]);
  const out = await runTool('ffprobe', [
    '-v',
    'error',
    '-show_entries',
    'format=duration',
    '-of',
    'csv=p=0',
    output,
  ]);
  return Math.round(Number(out.trim()) * 1000) / 1000 || 0;
}

/** A command's standard output; rejects with the last lines of its standard error when it fails. */
export function runTool(binary: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => {
      err = (err + c.toString()).slice(-2000);
    });
    child.on('error', (e) => reject(new Error(`${binary} could not start: ${e.message}`)));
    child.on('close', (code) =>
      code === 0
        ? resolve(Buffer.concat(out).toString('utf8'))
        : reject(new Error(`${binary} exited with ${code}: ${err.trim().split('\n').pop() ?? ''}`)),
    );
  });
}
