import { openAsBlob, statSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { CliError } from '../context.js';
import { print } from '../output.js';
import { Progress, pollUntil } from '../wait.js';
import type { Action } from './action.js';
import { takeFlag } from './action.js';

const CONTENT_TYPES: Record<string, string> = {
  '.wav': 'audio/wav',
  '.mp3': 'audio/mpeg',
  '.m4a': 'audio/mp4',
  '.mp4': 'video/mp4',
  '.ogg': 'audio/ogg',
  '.oga': 'audio/ogg',
  '.flac': 'audio/flac',
  '.webm': 'audio/webm',
  '.mkv': 'video/x-matroska',
};

interface Job {
  job_id: string;
  status: string;
  segments?: { start: number; end: number; text: string }[];
  error_message?: string | null;
}

/**
 * `fjord speech transcribe FILE`: the three steps of a transcription in one — create the job,
 * PUT the file to its presigned address, mark the upload complete — then wait for the text.
 */
export const speechTranscribe: Action = {
  words: ['speech', 'transcribe'],
  args: ['file'],
  op: 'speechCreateJob',
  help: `Uploads FILE (any audio or video ffmpeg reads) and waits for its transcript, showing the
job's status on stderr. Prints the transcript one timed segment a line; -o json or -o yaml
print the whole job (segments with word timings, artifacts). --language as below (auto).`,
  async run(a, [file, ...rest]) {
    if (!file || rest.length) throw new CliError('usage: fjord speech transcribe <file> [--language xx]', 2);
    let size: number;
    try {
      size = statSync(file).size;
    } catch {
      throw new CliError(`cannot read ${file}`, 2);
    }
    const language = takeFlag(a, 'language');
    const created = (await a.call('speechCreateJob', {
      flags: [
        ['filename', basename(file)],
        [
          'content_type',
          takeFlag(a, 'content_type') ??
            CONTENT_TYPES[extname(file).toLowerCase()] ??
            'application/octet-stream',
        ],
        ['file_size_bytes', String(size)],
        ...(language ? ([['language', language]] as [string, string][]) : []),
      ],
    })) as { job_id: string; upload_url: string };
    const put = await fetch(created.upload_url, { method: 'PUT', body: await openAsBlob(file) });
    if (!put.ok)
      throw new CliError(`the upload was refused: ${put.status} ${(await put.text()).slice(0, 200)}`);
    const queued = (await a.call('speechUploadComplete', { positional: [created.job_id] })) as Job;
    const job = await pollUntil<Job>({
      first: queued,
      read: async () => (await a.call('speechGetJob', { positional: [created.job_id] })) as Job,
      status: (j) => j.status,
      isDone: (s) => s === 'ready' || s === 'failed' || s === 'expired',
      progress: new Progress(a.err),
      intervalMs: 500,
    });
    if (a.output !== 'table') print(job, a.output, a.out);
    else {
      a.out(`job_id  ${job.job_id}\nstatus  ${job.status}\n\n`);
      for (const s of job.segments ?? []) a.out(`[${s.start.toFixed(2)}-${s.end.toFixed(2)}] ${s.text}\n`);
    }
    if (job.status !== 'ready')
      throw new CliError(`transcription ${job.status}: ${job.error_message ?? ''}`.trimEnd());
    return 0;
  },
};
