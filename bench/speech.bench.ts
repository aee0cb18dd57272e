// Speech through Fjord's pipeline against the recogniser alone, in the same run.
//
//   npm run bench:speech [-- --seconds 60,600]
//
// For each length: speech made by flite (a text repeated to the length), uploaded with curl to
// the presigned address, upload-complete, the transcription job drained; its processing time is
// set against `pocketsphinx_continuous -time yes` on the same audio normalised to 16 kHz mono,
// timed alone. Real-time factor = processing time / audio length. Peak RSS is this process's
// (Fjord runs in it) and the recogniser's, read from /proc while the job runs.
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { TestFjord } from '../test/helpers/fjord.js';
import { clipDir, curlUpload } from '../test/helpers/speech.js';

const run = promisify(execFile);
const { values: args } = parseArgs({ options: { seconds: { type: 'string', default: '60,600' } } });
const LENGTHS = args.seconds.split(',').map(Number);
const TEXT =
  'The quick brown fox jumps over the lazy dog near the river bank while the farmer counts his sheep in the morning light. ';

/** Peak resident set size (kB) of a process and its children seen so far, sampled every 50 ms. */
function watchRss(): { stop(): number } {
  let peak = 0;
  const sample = () => {
    const mine = Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);
    let children = 0;
    try {
      for (const pid of execFileSync('pgrep', ['-P', String(process.pid)], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean))
        children += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {}
    peak = Math.max(peak, mine + children);
  };
  const timer = setInterval(sample, 50);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

const t = await TestFjord.create({ FJORD_S3_PORT: '0', FJORD_LOG_LEVEL: 'fatal' });
await t.fjord.start(['s3']);
try {
  const c = await t.customer();
  const dir = clipDir();
  const rows = [];
  for (const seconds of LENGTHS) {
    // flite, then cut or padded to exactly `seconds`.
    const raw = join(dir, `raw-${seconds}.wav`);
    const words = Math.ceil((seconds * 2.6) / 1) + 10;
    const text = TEXT.repeat(Math.ceil(words / 22))
      .split(' ')
      .slice(0, words)
      .join(' ');
    execFileSync('flite', ['-voice', 'rms', '-t', text, '-o', raw]);
    const clip = join(dir, `clip-${seconds}.wav`);
    execFileSync('ffmpeg', [
      '-v',
      'error',
      '-nostdin',
      '-y',
      '-i',
      raw,
      '-af',
      `apad=whole_dur=${seconds}`,
      '-t',
      String(seconds),
      clip,
    ]);
    const created = await t.request('POST', '/v1/transcript/jobs', {
      key: c.pat,
      body: {
        filename: 'clip.wav',
        content_type: 'audio/wav',
        file_size_bytes: statSync(clip).size,
        language: 'en',
      },
    });
    if (created.status !== 201) throw new Error(created.text);
    if ((await curlUpload(created.body.upload_url, clip)) !== 200) throw new Error('upload failed');
    await t.request('POST', `/v1/transcript/jobs/${created.body.job_id}/upload-complete`, {
      key: c.pat,
      body: {},
    });
    const rss = watchRss();
    const t0 = performance.now();
    await t.kernel.jobs.drain();
    const pipelineMs = performance.now() - t0;
    const peakKb = rss.stop();
    const job = (await t.request('GET', `/v1/transcript/jobs/${created.body.job_id}`, { key: c.pat })).body;
    if (job.status !== 'ready') throw new Error(`job ${job.status}: ${job.error_message}`);
    // The recogniser alone on the same audio, normalised as Fjord normalises it.
    const norm = join(dir, `norm-${seconds}.wav`);
    execFileSync('ffmpeg', [
      '-v',
      'error',
      '-nostdin',
      '-y',
      '-i',
      clip,
      '-ac',
      '1',
      '-ar',
      '16000',
      '-c:a',
      'pcm_s16le',
      norm,
    ]);
    const r0 = performance.now();
    await run('pocketsphinx_continuous', ['-infile', norm, '-time', 'yes'], { maxBuffer: 1 << 26 });
    const aloneMs = performance.now() - r0;
    rows.push({
      audio: `${seconds} s`,
      'Fjord RTF': (job.processing_time_ms / 1000 / seconds).toFixed(3),
      'pocketsphinx alone RTF': (aloneMs / 1000 / seconds).toFixed(3),
      ratio: `${(job.processing_time_ms / aloneMs).toFixed(2)}×`,
      'drain ms': Math.round(pipelineMs),
      'peak RSS MB (Fjord + recogniser)': Math.round(peakKb / 1024),
    });
  }
  console.log(`node ${process.version}`);
  console.table(rows);
} finally {
  await t.close();
}
