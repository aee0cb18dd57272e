/**
 * Reads what the ingest's ffmpeg reports of each packet it copies (its `framecrc` output on a
 * pipe: a header naming each stream's type, codec and size, then one line per packet with the
 * stream, DTS, duration, size and — on every packet that is not a keyframe — `F=0x…`), and keeps
 * the numbers the ingest and health views show. Everything is measured on the stream's own
 * timestamps, except the time of the last frame, which is when Fjord read it.
 */

export interface StreamMetrics {
  video: { codec: string; width: number | null; height: number | null } | null;
  audio: { codec: string; sample_rate: number | null; channels: string | null } | null;
  /** Media bitrate over the last few seconds of the stream, in kbit/s. */
  bitrate_kbps: number | null;
  /** Video frames per second over the last few seconds. */
  frame_rate: number | null;
  /** Seconds between the last two keyframes. */
  keyframe_interval_seconds: number | null;
  video_frames: number;
  audio_frames: number;
  /** Video frames missing from the timestamps (a gap longer than one and a half frames). */
  dropped_frames: number;
  /** Seconds of media received. */
  media_seconds: number;
}

interface Packet {
  ms: number;
  size: number;
  video: boolean;
}

/** How much of the stream the bitrate and frame rate are averaged over, in stream milliseconds. */
const WINDOW_MS = 4000;

export class StreamMeter {
  private readonly types = new Map<number, string>();
  private readonly codecs = new Map<number, string>();
  private readonly info = new Map<number, Record<string, string>>();
  private readonly timebase = new Map<number, number>();
  private recent: Packet[] = [];
  private partial = '';
  private keyframes: number[] = [];
  private lastVideoMs: number | null = null;
  private frameMs: number | null = null;
  private firstMs: number | null = null;
  private lastMs: number | null = null;
  videoFrames = 0;
  audioFrames = 0;
  droppedFrames = 0;
  /** When the last video frame (or audio, for audio-only streams) was read. */
  lastFrameAt: number | null = null;

  constructor(private readonly now: () => number) {}

  /** Feeds bytes of ffmpeg's framecrc output (lines may be split across chunks). */
  feed(chunk: string): void {
    const text = this.partial + chunk;
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) this.line(line.trim());
  }

  private line(line: string): void {
    if (line.startsWith('#')) {
      this.header(line);
      return;
    }
    const parts = line.split(',').map((p) => p.trim());
    if (parts.length < 6) return;
    const stream = Number(parts[0]);
    const dts = Number(parts[1]);
    const size = Number(parts[4]);
    if (!Number.isFinite(stream) || !Number.isFinite(dts) || !Number.isFinite(size)) return;
    const ms = dts * (this.timebase.get(stream) ?? 1);
    const video = this.types.get(stream) === 'video';
    const key = !parts.slice(6).some((p) => p.startsWith('F='));
    this.firstMs ??= ms;
    this.lastMs = Math.max(this.lastMs ?? ms, ms);
    this.recent.push({ ms, size, video });
    while (this.recent.length > 0 && this.recent[0]!.ms < ms - WINDOW_MS) this.recent.shift();
    if (video) {
      this.videoFrames++;
      if (this.lastVideoMs !== null) {
        const step = ms - this.lastVideoMs;
        if (step > 0) {
          this.frameMs = this.frameMs === null ? step : Math.min(this.frameMs, step);
          if (this.frameMs > 0 && step > 1.5 * this.frameMs)
            this.droppedFrames += Math.round(step / this.frameMs) - 1;
        }
      }
      this.lastVideoMs = ms;
      if (key) this.keyframes = [...this.keyframes.slice(-1), ms];
      this.lastFrameAt = this.now();
    } else {
      this.audioFrames++;
      if (this.videoFrames === 0) this.lastFrameAt = this.now();
    }
  }

  private header(line: string): void {
    const m = /^#(\w+) (\d+):\s*(.*)$/.exec(line);
    if (!m) return;
    const [, name, index, value] = m as unknown as [string, string, string, string];
    const stream = Number(index);
    if (name === 'media_type') this.types.set(stream, value);
    else if (name === 'codec_id') this.codecs.set(stream, value);
    else if (name === 'tb') {
      const [num, den] = value.split('/').map(Number);
      if (num && den) this.timebase.set(stream, (1000 * num) / den);
    } else this.info.set(stream, { ...this.info.get(stream), [name]: value });
  }

  private streamOf(type: string): number | undefined {
    for (const [stream, t] of this.types) if (t === type) return stream;
    return undefined;
  }

  metrics(): StreamMetrics {
    const v = this.streamOf('video');
    const a = this.streamOf('audio');
    const dims = v === undefined ? undefined : this.info.get(v)?.['dimensions']?.split('x').map(Number);
    const span = this.recent.length > 1 ? this.recent.at(-1)!.ms - this.recent[0]!.ms : 0;
    const bytes = this.recent.reduce((n, p) => n + p.size, 0);
    const videoPackets = this.recent.filter((p) => p.video);
    const frames = videoPackets.length;
    const videoSpan = frames > 1 ? videoPackets.at(-1)!.ms - videoPackets[0]!.ms : 0;
    const round = (n: number, places: number) => Math.round(n * 10 ** places) / 10 ** places;
    const rate = this.info.get(a ?? -1)?.['sample_rate'];
    return {
      video:
        v === undefined
          ? null
          : { codec: this.codecs.get(v) ?? 'unknown', width: dims?.[0] ?? null, height: dims?.[1] ?? null },
      audio:
        a === undefined
          ? null
          : {
              codec: this.codecs.get(a) ?? 'unknown',
              sample_rate: rate ? Number(rate) : null,
              channels: this.info.get(a)?.['channel_layout_name'] ?? null,
            },
      bitrate_kbps: span >= 500 ? Math.round((bytes * 8) / span) : null,
      frame_rate: videoSpan >= 500 ? round(((frames - 1) * 1000) / videoSpan, 2) : null,
      keyframe_interval_seconds:
        this.keyframes.length === 2 ? round((this.keyframes[1]! - this.keyframes[0]!) / 1000, 3) : null,
      video_frames: this.videoFrames,
      audio_frames: this.audioFrames,
      dropped_frames: this.droppedFrames,
      media_seconds:
        this.firstMs === null || this.lastMs === null ? 0 : round((this.lastMs - this.firstMs) / 1000, 3),
    };
  }
}
