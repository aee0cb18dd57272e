import { readFile } from 'node:fs/promises';
import { EngineError, type SpeechEngine, segmentsOf, type Transcription, type Word } from './engine.js';

interface VerboseWord {
  word: string;
  start: number;
  end: number;
  probability?: number;
}
interface VerboseSegment {
  start: number;
  end: number;
  text: string;
  avg_logprob?: number;
  words?: VerboseWord[];
}
interface VerboseJson {
  language?: string;
  segments?: VerboseSegment[];
  words?: VerboseWord[];
}

/** OpenAI names the language in English ("english"); whisper.cpp's server gives the code. */
const LANGUAGE_NAMES: Record<string, string> = {
  english: 'en',
  german: 'de',
  french: 'fr',
  spanish: 'es',
  italian: 'it',
  dutch: 'nl',
  swedish: 'sv',
  norwegian: 'no',
  danish: 'da',
  finnish: 'fi',
  polish: 'pl',
  portuguese: 'pt',
  japanese: 'ja',
  chinese: 'zh',
};

/**
 * Any server speaking OpenAI's `POST /v1/audio/transcriptions` with `verbose_json` and word
 * timestamps: OpenAI, whisper.cpp's server, faster-whisper servers. `baseUrl` ends in `/v1`.
 */
export class OpenAiCompatibleEngine implements SpeechEngine {
  readonly name = 'openai-compatible';
  readonly languages = null;

  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string | undefined,
    private readonly model: string,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  async transcribe(wavPath: string, language: string): Promise<Transcription> {
    const form = new FormData();
    form.set('file', new Blob([await readFile(wavPath)], { type: 'audio/wav' }), 'audio.wav');
    form.set('model', this.model);
    form.set('response_format', 'verbose_json');
    form.append('timestamp_granularities[]', 'word');
    form.append('timestamp_granularities[]', 'segment');
    if (language !== 'auto') form.set('language', language);
    let res: Response;
    try {
      res = await this.fetchImpl(`${this.baseUrl.replace(/\/$/, '')}/audio/transcriptions`, {
        method: 'POST',
        body: form,
        headers: this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {},
      });
    } catch (err) {
      throw new EngineError(`The transcription server could not be reached: ${(err as Error).message}`);
    }
    if (!res.ok)
      throw new EngineError(
        `The transcription server answered ${res.status}: ${(await res.text()).slice(0, 300)}`,
      );
    const body = (await res.json()) as VerboseJson;
    const reported = (body.language ?? '').toLowerCase();
    const detected =
      reported.length === 2
        ? reported
        : (LANGUAGE_NAMES[reported] ?? (language === 'auto' ? 'und' : language));
    const toWord = (w: VerboseWord): Word => ({
      word: w.word.trim(),
      start: w.start,
      end: w.end,
      confidence: w.probability ?? 1,
    });
    const loose = (body.words ?? []).map(toWord);
    const segments = (body.segments ?? []).map((s) => {
      // OpenAI lists words beside the segments; whisper.cpp nests them. Either way, by time.
      const words = s.words
        ? s.words.map(toWord)
        : loose.filter((w) => w.start >= s.start - 0.01 && w.start < s.end);
      const segmentConfidence = s.avg_logprob === undefined ? undefined : Math.exp(s.avg_logprob);
      return {
        text: s.text,
        start: s.start,
        end: s.end,
        words: words.map((w) =>
          w.confidence === 1 && segmentConfidence !== undefined ? { ...w, confidence: segmentConfidence } : w,
        ),
      };
    });
    return { language: detected, segments: segmentsOf(segments) };
  }
}
