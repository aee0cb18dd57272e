import { describe, expect, it } from 'vitest';
import { StreamMeter } from '../../src/areas/live/meter.js';

/** The meter reads ffmpeg's framecrc lines: header, then one line per packet (F=0x0: not a keyframe). */
const header = [
  '#tb 0: 1/1000',
  '#media_type 0: video',
  '#codec_id 0: h264',
  '#dimensions 0: 640x360',
  '#tb 1: 1/1000',
  '#media_type 1: audio',
  '#codec_id 1: aac',
  '#sample_rate 1: 48000',
  '#channel_layout_name 1: stereo',
];

function frames(seconds: number, opts: { fps?: number; gop?: number; bytes?: number; skip?: number[] } = {}) {
  const fps = opts.fps ?? 25;
  const out: string[] = [];
  for (let i = 0; i < seconds * fps; i++) {
    if (opts.skip?.includes(i)) continue;
    const ms = Math.round((i * 1000) / fps);
    const key = i % (opts.gop ?? fps) === 0;
    out.push(`0, ${ms}, ${ms}, 40, ${opts.bytes ?? 5000}, 0xabcdef01${key ? '' : ', F=0x0'}`);
    out.push(`1, ${ms}, ${ms}, 21, 300, 0x01020304`);
  }
  return out;
}

describe('stream meter', () => {
  it('measures codecs, size, bitrate, frame rate and keyframe interval from the stream timestamps', () => {
    let now = 1000;
    const meter = new StreamMeter(() => now);
    // Lines split anywhere across chunks.
    const text = `${[...header, ...frames(6, { gop: 50 })].join('\n')}\n`;
    for (let i = 0; i < text.length; i += 333) meter.feed(text.slice(i, i + 333));
    now = 2000;
    const m = meter.metrics();
    expect(m.video).toEqual({ codec: 'h264', width: 640, height: 360 });
    expect(m.audio).toEqual({ codec: 'aac', sample_rate: 48000, channels: 'stereo' });
    expect(m.frame_rate).toBeCloseTo(25, 0);
    expect(m.keyframe_interval_seconds).toBe(2);
    // 25 × (5000 + 300) bytes a second = 1060 kbit/s.
    expect(m.bitrate_kbps).toBeGreaterThan(1000);
    expect(m.bitrate_kbps).toBeLessThan(1120);
    expect(m.dropped_frames).toBe(0);
    expect(m.video_frames).toBe(150);
    expect(meter.lastFrameAt).toBe(1000);
  });

  it('counts video frames missing from the timestamps', () => {
    const meter = new StreamMeter(() => 0);
    meter.feed(`${[...header, ...frames(2, { skip: [10, 11, 12, 30] })].join('\n')}\n`);
    expect(meter.metrics().dropped_frames).toBe(4);
  });

  it('knows a stream without audio', () => {
    const meter = new StreamMeter(() => 0);
    meter.feed(`${[...header.slice(0, 4), ...frames(1).filter((l) => l.startsWith('0,'))].join('\n')}\n`);
    expect(meter.metrics()).toMatchObject({ audio: null, audio_frames: 0, video_frames: 25 });
  });
});
