import { runTool } from '../media.js';
import { EngineError, type SpeechEngine, segmentsOf, type Transcription, type Word } from './engine.js';

const WORD_LINE = /^(\S+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (-?\d+(?:\.\d+)?)$/;
/** Markers the recogniser emits that are not words: sentence bounds, silence, noise. */
const NOT_A_WORD = /^(<s>|<\/s>|<sil>|\[.*\]|\+\+.*\+\+)$/;

/**
 * Parses `pocketsphinx_continuous -time yes` output: for each utterance a line of text, then one
 * `word start end confidence` line per word (alternate pronunciations are marked `word(2)`).
 */
export function parsePocketsphinx(output: string): Word[][] {
  const utterances: Word[][] = [];
  let current: Word[] | null = null;
  for (const line of output.split('\n')) {
    const m = WORD_LINE.exec(line.trim());
    if (!m) {
      if (line.trim()) {
        current = [];
        utterances.push(current);
      }
      continue;
    }
    if (NOT_A_WORD.test(m[1]!)) continue;
    if (!current) {
      current = [];
      utterances.push(current);
    }
    current.push({
      word: m[1]!.replace(/\(\d+\)$/, ''),
      start: Number(m[2]),
      end: Number(m[3]),
      confidence: Number(m[4]),
    });
  }
  return utterances.filter((u) => u.length > 0);
}

/**
 * CMU PocketSphinx 0.8 with its US English model (Debian's `pocketsphinx` and
 * `pocketsphinx-en-us`). `pocketsphinx_continuous` cuts the recording on silences itself and
 * decodes it utterance by utterance as it reads, so memory stays flat however long the file is.
 */
export class PocketsphinxEngine implements SpeechEngine {
  readonly name = 'pocketsphinx';
  readonly languages = ['en'] as const;

  constructor(private readonly binary = 'pocketsphinx_continuous') {}

  async transcribe(wavPath: string, language: string): Promise<Transcription> {
    if (language !== 'auto' && language !== 'en')
      throw new EngineError(
        `The pocketsphinx engine recognises English only (asked for ${language}); configure an openai-compatible engine for other languages.`,
      );
    // The recogniser failing is a refusal of this file, not a passing fault: no retry.
    const output = await runTool(this.binary, [
      '-infile',
      wavPath,
      '-time',
      'yes',
      '-logfn',
      '/dev/null',
    ]).catch((err: Error) => {
      throw new EngineError(err.message);
    });
    return { language: 'en', segments: segmentsOf(parsePocketsphinx(output).map((words) => ({ words }))) };
  }
}
