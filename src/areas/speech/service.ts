import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Principal } from '../../kernel/auth/principal.js';
import { type Clock, isoOf } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { JobContext, JobQueue } from '../../kernel/jobs/queue.js';
import type { SecretBox } from '../../kernel/secrets.js';
import type { Store } from '../../kernel/store/store.js';
import type { InternalObjects } from '../storage/service.js';
import { EngineError, type Segment, type SpeechEngine } from './drivers/engine.js';
import { speechErrors } from './errors.js';
import { CONTENT_TYPES, type ExportFormat, render } from './exports.js';
import { audioProblem, normalise } from './media.js';
import type { SpeechArtifactsTable, SpeechJobsTable } from './migrations.js';
import { SpeechRepo } from './repo.js';

export const UPLOAD_EXPIRES_SECONDS = 3600;
/** Download addresses of artifacts open the file for this long after they are handed out. */
export const DOWNLOAD_EXPIRES_SECONDS = 3600;
export const TRANSCRIBE_JOB = 'speech.transcribe';
export const EXPIRE_JOB = 'speech.expire';
export const TRANSCRIBE_ATTEMPTS = 3;

const uploadKey = (jobId: string) => `jobs/${jobId}/upload`;
const artifactKey = (jobId: string, artifactId: string, format: string) =>
  `jobs/${jobId}/${artifactId}.${format}`;

export interface CreateJobBody {
  filename: string;
  content_type: string;
  file_size_bytes: number;
  language?: string;
}

/** Transcription jobs: an upload into Fjord's own storage, a durable recognition job, exports. */
export class SpeechService {
  readonly repo: SpeechRepo;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly jobs: JobQueue,
    private readonly files: InternalObjects,
    private readonly secrets: SecretBox,
    readonly engine: SpeechEngine,
    private readonly maxFileBytes: number,
    private readonly baseUrl: () => string,
  ) {
    this.repo = SpeechRepo.of(store);
  }

  async create(principal: Principal, body: CreateJobBody) {
    if (body.file_size_bytes > this.maxFileBytes) throw speechErrors.tooLarge(this.maxFileBytes);
    const language = (body.language ?? 'auto').toLowerCase();
    if (language !== 'auto' && !/^[a-z]{2}$/.test(language)) throw speechErrors.language(body.language!);
    const id = newId();
    const now = this.clock.nowMs();
    await this.store.unitOfWork({ locks: [] }, async ({ tx }) => {
      await SpeechRepo.over(tx).insertJob({
        id,
        customer_id: principal.customerId,
        status: 'created',
        language,
        original_filename: body.filename,
        content_type: body.content_type,
        file_size_bytes: body.file_size_bytes,
        audio_duration_sec: null,
        processing_time_ms: null,
        billed_minutes: null,
        error_message: null,
        segments: null,
        created_at: now,
        completed_at: null,
      });
      // A job nobody uploads to expires with its upload address, on the clock.
      await this.jobs.enqueue(
        EXPIRE_JOB,
        { job_id: id },
        { db: tx, runAt: now + UPLOAD_EXPIRES_SECONDS * 1000 },
      );
    });
    return {
      job_id: id,
      upload_url: this.files.presignPut(uploadKey(id), body.file_size_bytes, UPLOAD_EXPIRES_SECONDS),
      upload_expires_in: UPLOAD_EXPIRES_SECONDS,
    };
  }

  /** Queues the job once its file is in storage and has audio; for a job past `created`, its status as it is. */
  async uploadComplete(customerId: string, id: string) {
    const job = await this.mustGet(customerId, id);
    if (['queued', 'processing', 'ready'].includes(job.status)) return this.view(job);
    if (job.status !== 'created') throw speechErrors.notUploadable(job.status);
    const dir = await mkdtemp(join(tmpdir(), 'fjord-speech-'));
    try {
      const file = join(dir, 'upload');
      await this.download(uploadKey(id), file);
      const problem = await audioProblem(file);
      if (problem) throw speechErrors.noAudio(problem);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    await this.store.unitOfWork({ locks: [`speech:job:${id}`] }, async ({ tx }) => {
      if (await SpeechRepo.over(tx).transition(id, ['created'], { status: 'queued' }))
        await this.jobs.enqueue(
          TRANSCRIBE_JOB,
          { job_id: id },
          { db: tx, uniqueKey: `speech:${id}`, maxAttempts: TRANSCRIBE_ATTEMPTS },
        );
    });
    this.jobs.wake(TRANSCRIBE_JOB);
    return this.view((await this.repo.jobById(id))!);
  }

  async list(customerId: string, q: { status?: string; limit?: number; offset?: number }) {
    const limit = q.limit ?? 20;
    const offset = q.offset ?? 0;
    const { jobs, total } = await this.repo.page(customerId, q.status, limit, offset);
    return {
      jobs: jobs.map((j) => ({
        job_id: j.id,
        status: j.status,
        language: j.language,
        original_filename: j.original_filename,
        audio_duration_sec: j.audio_duration_sec,
        created_at: isoOf(Number(j.created_at)),
      })),
      total,
      limit,
      offset,
    };
  }

  async get(customerId: string, id: string) {
    const job = await this.mustGet(customerId, id);
    const view: Record<string, unknown> = this.view(job);
    if (job.status === 'ready') {
      view.segments = JSON.parse(job.segments ?? '[]');
      view.artifacts = (await this.repo.artifacts(id)).map((a) => this.artifactView(a));
    }
    return view;
  }

  /** Removes the upload and every artifact from storage, then the job. */
  async remove(customerId: string, id: string) {
    const job = await this.mustGet(customerId, id);
    for (const a of await this.repo.artifacts(id)) await this.files.delete(artifactKey(id, a.id, a.format));
    await this.files.delete(uploadKey(id));
    await this.repo.deleteJob(job.id);
    return { status: 'deleted' as const, job_id: id };
  }

  async export(customerId: string, id: string, format: ExportFormat) {
    const job = await this.mustGet(customerId, id);
    if (job.status !== 'ready') throw speechErrors.notReady(job.status);
    const found = await this.repo.artifactOf(id, format);
    if (found) return this.artifactView(found);
    return this.artifactView(await this.makeArtifact(job, format));
  }

  async downloadArtifact(artifactId: string, token: string) {
    let claims: { a: string; e: number };
    try {
      claims = JSON.parse(this.secrets.open(Buffer.from(token, 'base64url').toString('utf8')));
    } catch {
      throw speechErrors.artifactNotFound();
    }
    if (claims.a !== artifactId || claims.e < this.clock.nowMs()) throw speechErrors.artifactNotFound();
    const a = await this.repo.artifact(artifactId);
    if (!a) throw speechErrors.artifactNotFound();
    const format = a.format as ExportFormat;
    return {
      body: await this.files.get(artifactKey(a.job_id, a.id, format)),
      contentType: CONTENT_TYPES[format],
      filename: `transcript-${a.job_id}.${format}`,
    };
  }

  /** The durable `speech.transcribe` job. Safe to repeat: a retry starts over from the upload. */
  async process(jobId: string, ctx: JobContext): Promise<void> {
    const moved = await this.repo.transition(jobId, ['queued', 'processing'], { status: 'processing' });
    if (!moved) return; // deleted meanwhile, or already finished
    const job = (await this.repo.jobById(jobId))!;
    const started = Date.now();
    const dir = await mkdtemp(join(tmpdir(), 'fjord-speech-'));
    try {
      const input = join(dir, 'upload');
      const wav = join(dir, 'audio.wav');
      await this.download(uploadKey(jobId), input);
      const duration = await normalise(input, wav);
      const result = await this.engine.transcribe(wav, job.language);
      const ready = {
        ...job,
        status: 'ready',
        language: result.language,
        audio_duration_sec: duration,
        processing_time_ms: Date.now() - started,
        billed_minutes: Math.ceil(duration / 60),
        segments: JSON.stringify(result.segments),
        completed_at: this.clock.nowMs(),
      };
      // Exports exist by the time anyone sees `ready`.
      for (const format of ['txt', 'json'] as const)
        if (!(await this.repo.artifactOf(jobId, format))) await this.makeArtifact(ready, format);
      const { id: _id, customer_id: _c, created_at: _t, ...patch } = ready;
      await this.repo.transition(jobId, ['processing'], patch);
    } catch (err) {
      // A recogniser that refuses (an unsupported language) will refuse again: fail now. Anything
      // else (a crashed ffmpeg, storage away) is retried until the last attempt.
      const final = err instanceof EngineError || ctx.attempt >= TRANSCRIBE_ATTEMPTS;
      if (!final) throw err;
      await this.repo.transition(jobId, ['processing'], {
        status: 'failed',
        error_message: (err as Error).message.slice(0, 500),
        processing_time_ms: Date.now() - started,
        completed_at: this.clock.nowMs(),
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** The worker died on every attempt: the job fails with a message that says so. */
  async abandon(jobId: string): Promise<void> {
    await this.repo.transition(jobId, ['queued', 'processing'], {
      status: 'failed',
      error_message: `Transcription stopped ${TRANSCRIBE_ATTEMPTS} times without finishing (the worker was lost); upload again to retry.`,
      completed_at: this.clock.nowMs(),
    });
  }

  async expire(jobId: string): Promise<void> {
    await this.repo.transition(jobId, ['created'], { status: 'expired', completed_at: this.clock.nowMs() });
  }

  private async makeArtifact(job: SpeechJobsTable, format: ExportFormat): Promise<SpeechArtifactsTable> {
    const segments = JSON.parse(job.segments ?? '[]') as Segment[];
    const text = render(
      format,
      { job_id: job.id, language: job.language, audio_duration_sec: job.audio_duration_sec },
      segments,
    );
    const id = newId();
    const { size } = await this.files.put(
      artifactKey(job.id, id, format),
      Readable.from([Buffer.from(text)]),
      CONTENT_TYPES[format],
    );
    const row = {
      id,
      job_id: job.id,
      customer_id: job.customer_id,
      format,
      size_bytes: size,
      created_at: this.clock.nowMs(),
    };
    try {
      await this.repo.insertArtifact(row);
      return row;
    } catch (err) {
      // Two first requests at once: the other one's artifact stands, this copy goes.
      await this.files.delete(artifactKey(job.id, id, format));
      const other = await this.repo.artifactOf(job.id, format);
      if (other) return other;
      throw err;
    }
  }

  private artifactView(a: SpeechArtifactsTable) {
    const token = Buffer.from(
      this.secrets.seal(JSON.stringify({ a: a.id, e: this.clock.nowMs() + DOWNLOAD_EXPIRES_SECONDS * 1000 })),
    ).toString('base64url');
    return {
      artifact_id: a.id,
      format: a.format as ExportFormat,
      download_url: `${this.baseUrl()}/v1/transcript/artifacts/${a.id}/download?token=${token}`,
      size_bytes: Number(a.size_bytes),
    };
  }

  private view(job: SpeechJobsTable) {
    return {
      job_id: job.id,
      status: job.status,
      language: job.language,
      original_filename: job.original_filename,
      audio_duration_sec: job.audio_duration_sec,
      processing_time_ms: job.processing_time_ms,
      ...(job.status === 'failed' ? { error_message: job.error_message } : {}),
      created_at: isoOf(Number(job.created_at)),
      completed_at: job.completed_at === null ? null : isoOf(Number(job.completed_at)),
    };
  }

  private async mustGet(customerId: string, id: string) {
    const job = await this.repo.job(customerId, id);
    if (!job) throw speechErrors.notFound();
    return job;
  }

  private async download(key: string, path: string) {
    let body: Readable;
    try {
      body = await this.files.get(key);
    } catch {
      throw speechErrors.notUploaded();
    }
    await pipeline(body, createWriteStream(path));
  }
}
