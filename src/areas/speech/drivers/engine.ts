/** One recognised word, times in seconds from the start of the recording. */
export interface Word {
  word: string;
  start: number;
  end: number;
  /** 0…1 */
  confidence: number;
}

/** A stretch of speech between pauses (an utterance), as Whisper's `verbose_json` segments. */
export interface Segment {
  id: number;
  start: number;
  end: number;
  text: string;
  confidence: number;
  words: Word[];
}

export interface Transcription {
  /** The language recognised (ISO 639-1). */
  language: string;
  segments: Segment[];
}

/**
 * A speech recogniser. `transcribe` gets a 16 kHz mono 16-bit WAV file (Fjord normalises every
 * upload with ffmpeg first) and the language asked for (`auto` or ISO 639-1).
 */
export interface SpeechEngine {
  readonly name: string;
  /** Languages it recognises; null = any (the server decides). */
  readonly languages: readonly string[] | null;
  transcribe(wavPath: string, language: string): Promise<Transcription>;
}

export class EngineError extends Error {}

const round = (n: number) => Math.round(n * 1000) / 1000;

/** Builds segments from utterances of words: times rounded to ms, confidence as the words' mean. */
export function segmentsOf(
  utterances: { text?: string; words: Word[]; start?: number; end?: number }[],
): Segment[] {
  return utterances
    .filter((u) => u.words.length > 0 || (u.text ?? '').trim())
    .map((u, id) => {
      const words = u.words.map((w) => ({
        word: w.word,
        start: round(w.start),
        end: round(w.end),
        confidence: round(Math.min(1, Math.max(0, w.confidence))),
      }));
      const confidence = words.length ? words.reduce((s, w) => s + w.confidence, 0) / words.length : 0;
      return {
        id,
        start: round(u.start ?? words[0]?.start ?? 0),
        end: round(u.end ?? words[words.length - 1]?.end ?? 0),
        text: (u.text ?? words.map((w) => w.word).join(' ')).trim(),
        confidence: round(confidence),
        words,
      };
    });
}
