import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useEffect, useRef, useState } from 'preact/hooks';
import { must } from '../../api.js';
import { useApi, useConsole } from '../../context.js';
import { Link, navigateIfStillHere } from '../../router.js';
import { DataTable, type Row } from '../../ui/table.js';
import { Failure, Panel, QueryView } from '../../ui/widgets.js';
import { Field, State, subPath } from './shared.js';

/**
 * The files uploaded from this tab, by job: the player plays the file the browser still holds
 * (a blob: address), so nothing is downloaded again to listen to a transcript.
 */
const localAudio = new Map<string, { url: string; video: boolean }>();

const TERMINAL = new Set(['ready', 'failed', 'expired']);

export function SpeechPage({ path }: { path: string }) {
  const [id] = subPath(path);
  return id ? <SpeechJob id={id} /> : <SpeechList />;
}

function SpeechList() {
  const api = useApi();
  const jobs = useQuery({
    queryKey: ['speech', 'list'],
    queryFn: async () =>
      (await must(api.GET('/v1/transcript/jobs', { params: { query: { limit: 100 } } }))).jobs,
    // While a job is on its way, its status is kept current.
    refetchInterval: (q) =>
      (q.state.data ?? []).some((j) => !TERMINAL.has(String(j.status)) && j.status !== 'created')
        ? 2000
        : false,
  });
  return (
    <section>
      <h1>Speech</h1>
      <p class="intro">
        Transcription with word timings. Upload a recording; when it is ready, play it with the transcript
        following along.
      </p>
      <Panel title="Transcribe a recording" open>
        <Upload />
      </Panel>
      <h2>Jobs</h2>
      <QueryView query={jobs} what="jobs">
        {(data) => (
          <DataTable
            label="Transcription jobs"
            rows={(data ?? []) as Row[]}
            href={(r) => `/speech/${r['job_id']}`}
            columns={[
              { key: 'original_filename', label: 'File' },
              { key: 'status', label: 'Status', render: (r) => <State value={String(r['status'])} /> },
              { key: 'language', label: 'Language' },
              {
                key: 'audio_duration_sec',
                label: 'Length',
                render: (r) =>
                  r['audio_duration_sec'] == null ? '—' : `${Number(r['audio_duration_sec']).toFixed(1)} s`,
              },
              {
                key: 'created_at',
                label: 'Created',
                render: (r) => new Date(String(r['created_at'])).toLocaleString(),
              },
            ]}
            empty="No transcription jobs yet. Upload a recording above."
          />
        )}
      </QueryView>
    </section>
  );
}

/**
 * Create the job, PUT the file to its presigned address with progress, then tell Fjord it is
 * there. The PUT goes through `/console/upload` on this origin (the page may connect nowhere
 * else), which passes it on to the object storage.
 */
function Upload() {
  const api = useApi();
  const { session } = useConsole();
  const queries = useQueryClient();
  const [file, setFile] = useState<File | null>(null);
  const [language, setLanguage] = useState('auto');
  const [sent, setSent] = useState<number | null>(null);
  const [step, setStep] = useState('');
  const [error, setError] = useState<unknown>(null);
  return (
    <form
      class="form"
      onSubmit={async (e) => {
        e.preventDefault();
        if (!file) return;
        setError(null);
        const go = navigateIfStillHere();
        try {
          setStep('Creating the job…');
          const job = await must(
            api.POST('/v1/transcript/jobs', {
              body: {
                filename: file.name,
                content_type: file.type || 'application/octet-stream',
                file_size_bytes: file.size,
                language,
              },
            }),
          );
          setStep('Uploading…');
          setSent(0);
          await put(job.upload_url, file, session.csrf_token, setSent);
          localAudio.set(job.job_id, {
            url: URL.createObjectURL(file),
            video: file.type.startsWith('video/'),
          });
          setStep('Queueing…');
          await must(
            api.POST('/v1/transcript/jobs/{job_id}/upload-complete', {
              params: { path: { job_id: job.job_id } },
              body: {},
            }),
          );
          await queries.invalidateQueries({ queryKey: ['speech'] });
          go(`/speech/${job.job_id}`);
        } catch (err) {
          setError(err);
          setStep('');
        }
      }}
    >
      <Field id="speech-file" label="Audio or video file">
        <input
          id="speech-file"
          type="file"
          accept="audio/*,video/*"
          required
          onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
        />
      </Field>
      <Field id="speech-language" label="Language">
        <select id="speech-language" value={language} onChange={(e) => setLanguage(e.currentTarget.value)}>
          <option value="auto">Detect</option>
          <option value="en">English</option>
          <option value="nb">Norwegian Bokmål</option>
          <option value="sv">Swedish</option>
          <option value="da">Danish</option>
          <option value="de">German</option>
        </select>
      </Field>
      <div class="actions">
        <button type="submit" disabled={!file || (!!step && !error)}>
          Upload and transcribe
        </button>
      </div>
      {sent !== null && file && (
        <p>
          <label for="speech-progress">Upload</label>{' '}
          <progress id="speech-progress" max={file.size} value={sent} />{' '}
          {Math.round((100 * sent) / file.size)} %
        </p>
      )}
      <p role="status">{step}</p>
      {error ? <Failure error={error} /> : null}
    </form>
  );
}

/** XMLHttpRequest, not fetch: only it reports an upload's progress. */
function put(to: string, file: File, csrf: string, progress: (n: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', `/console/upload?to=${encodeURIComponent(to)}`);
    xhr.setRequestHeader('x-fjord-csrf', csrf);
    xhr.upload.onprogress = (e) => progress(e.loaded);
    xhr.onload = () => {
      progress(file.size);
      if (xhr.status < 300) resolve();
      else {
        let message = `The upload failed (${xhr.status}).`;
        try {
          message = JSON.parse(xhr.responseText).detail.message ?? message;
        } catch {}
        reject({ status: xhr.status, message, fields: {} });
      }
    };
    xhr.onerror = () => reject({ status: 0, message: 'The upload was interrupted.', fields: {} });
    xhr.send(file);
  });
}

interface Word {
  word: string;
  start: number;
  end: number;
  confidence: number;
}

function SpeechJob({ id }: { id: string }) {
  const api = useApi();
  const job = useQuery({
    queryKey: ['speech', 'job', id],
    queryFn: () => must(api.GET('/v1/transcript/jobs/{job_id}', { params: { path: { job_id: id } } })),
    refetchInterval: (q) => (q.state.data && TERMINAL.has(q.state.data.status) ? false : 1500),
  });
  const j = job.data;
  return (
    <section>
      <p class="crumbs">
        <Link href="/speech">Speech</Link> /
      </p>
      <h1>Speech: {j?.original_filename ?? id}</h1>
      <QueryView query={job} what="the job">
        {(j) => (
          <>
            <p aria-live="polite">
              Status: <State value={j.status} />
              {j.audio_duration_sec != null && ` · ${j.audio_duration_sec.toFixed(1)} s of audio`}
              {j.processing_time_ms != null &&
                ` · transcribed in ${(j.processing_time_ms / 1000).toFixed(1)} s`}
              {j.error_message && ` · ${j.error_message}`}
            </p>
            {j.status === 'ready' && (
              <>
                <Transcript id={id} words={(j.segments ?? []).flatMap((s) => s.words)} />
                <Exports id={id} />
              </>
            )}
          </>
        )}
      </QueryView>
    </section>
  );
}

/** The index of the word being spoken at `t` seconds (the last one started), or -1. */
function wordAt(words: Word[], t: number): number {
  let lo = 0;
  let hi = words.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (words[mid]!.start <= t) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found >= 0 && t <= words[found]!.end + 0.25 ? found : -1;
}

/**
 * The transcript beside the player: the word being spoken is highlighted (followed every frame
 * while playing, not at `timeupdate`'s four times a second), and a click on a word plays from it.
 */
function Transcript({ id, words }: { id: string; words: Word[] }) {
  const media = useRef<HTMLAudioElement & HTMLVideoElement>(null);
  const [current, setCurrent] = useState(-1);
  const local = localAudio.get(id);
  useEffect(() => {
    const el = media.current;
    if (!el) return;
    let frame = 0;
    const follow = () => {
      setCurrent(wordAt(words, el.currentTime));
      if (!el.paused) frame = requestAnimationFrame(follow);
    };
    const start = () => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(follow);
    };
    el.addEventListener('play', start);
    el.addEventListener('seeked', follow);
    el.addEventListener('pause', follow);
    return () => {
      cancelAnimationFrame(frame);
      el.removeEventListener('play', start);
      el.removeEventListener('seeked', follow);
      el.removeEventListener('pause', follow);
    };
  }, [words]);
  return (
    <>
      <h2>Transcript</h2>
      {local ? (
        local.video ? (
          // biome-ignore lint/a11y/useMediaCaption: the transcript beside it is the caption
          <video ref={media} src={local.url} controls class="player" aria-label="Recording" />
        ) : (
          // biome-ignore lint/a11y/useMediaCaption: the transcript beside it is the caption
          <audio ref={media} src={local.url} controls class="player" aria-label="Recording" />
        )
      ) : (
        <p class="help">
          The recording plays here in the browser that uploaded it; Fjord keeps only the transcript.
        </p>
      )}
      {words.length === 0 ? (
        <p class="empty">No words were recognised.</p>
      ) : (
        <section class="transcript" aria-label="Transcript, each word plays from its time">
          {words.map((w, i) => (
            <button
              key={i}
              type="button"
              class={i === current ? 'word now' : 'word'}
              aria-current={i === current ? 'true' : undefined}
              title={`${w.start.toFixed(2)} s · confidence ${Math.round(w.confidence * 100)} %`}
              onClick={() => {
                const el = media.current;
                setCurrent(i);
                if (!el) return;
                el.currentTime = w.start;
                void el.play().catch(() => {});
              }}
            >
              {w.word}
            </button>
          ))}
        </section>
      )}
    </>
  );
}

function Exports({ id }: { id: string }) {
  const api = useApi();
  const [links, setLinks] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>(null);
  return (
    <>
      <h2>Exports</h2>
      <div class="actions">
        {(['txt', 'json', 'srt', 'vtt'] as const).map((format) =>
          links[format] ? (
            <a key={format} href={links[format]} download={`${id}.${format}`}>
              Download {format.toUpperCase()}
            </a>
          ) : (
            <button
              key={format}
              type="button"
              onClick={async () => {
                try {
                  const a = await must(
                    api.POST('/v1/transcript/jobs/{job_id}/export', {
                      params: { path: { job_id: id } },
                      body: { format },
                    }),
                  );
                  setLinks((l) => ({ ...l, [format]: a.download_url }));
                } catch (err) {
                  setError(err);
                }
              }}
            >
              Export {format.toUpperCase()}
            </button>
          ),
        )}
      </div>
      {error ? <Failure error={error} /> : null}
    </>
  );
}
