import type { Segment, Word } from './drivers/engine.js';

export type ExportFormat = 'txt' | 'json' | 'srt' | 'vtt';

const MAX_LINE = 42;
const MAX_LINES = 2;
/** A cue also ends at a pause this long, so subtitles follow the speech. */
const PAUSE_SEC = 1;

/** Cues of at most two lines of at most 42 characters (broadcast subtitle guidelines), from word timings. */
export function cuesOf(segments: Segment[]): { start: number; end: number; lines: string[] }[] {
  const cues: { start: number; end: number; lines: string[] }[] = [];
  for (const segment of segments) {
    const words: Word[] = segment.words.length
      ? segment.words
      : [{ word: segment.text, start: segment.start, end: segment.end, confidence: segment.confidence }];
    let lines: string[] = [''];
    let start = words[0]!.start;
    let end = start;
    const flush = () => {
      if (lines[0]) cues.push({ start, end, lines: lines.filter(Boolean) });
      lines = [''];
    };
    for (const w of words) {
      const last = lines.length - 1;
      const fits = (lines[last]!.length ? lines[last]!.length + 1 : 0) + w.word.length <= MAX_LINE;
      if (lines[0] && w.start - end > PAUSE_SEC) flush();
      else if (!fits && lines.length >= MAX_LINES) flush();
      else if (!fits) lines.push('');
      if (!lines[0]) start = w.start;
      const i = lines.length - 1;
      lines[i] = lines[i] ? `${lines[i]} ${w.word}` : w.word;
      end = w.end;
    }
    flush();
  }
  return cues;
}

const stamp = (sec: number, comma: boolean) => {
  const ms = Math.round(sec * 1000);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const s = `${p(Math.floor(ms / 3600000))}:${p(Math.floor(ms / 60000) % 60)}:${p(Math.floor(ms / 1000) % 60)}`;
  return `${s}${comma ? ',' : '.'}${p(ms % 1000, 3)}`;
};

export function render(
  format: ExportFormat,
  job: { job_id: string; language: string; audio_duration_sec: number | null },
  segments: Segment[],
): string {
  switch (format) {
    case 'txt':
      return `${segments.map((s) => s.text).join('\n')}\n`;
    case 'json':
      return JSON.stringify({ ...job, text: segments.map((s) => s.text).join(' '), segments }, null, 2);
    case 'srt':
      return cuesOf(segments)
        .map((c, i) => `${i + 1}\n${stamp(c.start, true)} --> ${stamp(c.end, true)}\n${c.lines.join('\n')}\n`)
        .join('\n');
    case 'vtt':
      return `WEBVTT\n\n${cuesOf(segments)
        .map((c) => `${stamp(c.start, false)} --> ${stamp(c.end, false)}\n${c.lines.join('\n')}\n`)
        .join('\n')}`;
  }
}

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  txt: 'text/plain; charset=utf-8',
  json: 'application/json',
  srt: 'application/x-subrip',
  vtt: 'text/vtt',
};
