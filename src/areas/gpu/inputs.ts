import type { Engine, JobType } from './catalogue.js';
import { MAX_VIDEO_SECONDS } from './catalogue.js';
import { gpuErrors } from './errors.js';

const ASPECTS = ['1:1', '4:5', '16:9', '9:16'];
const MAX_PROMPT = 4000;
const MAX_SPEECH_TEXT = 5000;
const ISO_639_1 = /^[a-z]{2}$/;

const ALLOWED: Record<JobType, readonly string[]> = {
  image: ['prompt', 'aspect_ratio', 'negative_prompt', 'seed'],
  video: ['prompt', 'duration_sec', 'negative_prompt', 'seed'],
  'text-to-speech': ['text', 'voice', 'format'],
  transcription: ['audio_url', 'language'],
};

/** A job's inputs with defaults filled in, and the units it is estimated to cost. */
export interface CheckedInputs {
  inputs: Record<string, unknown>;
  units: number;
}

/**
 * Inputs per type; anything not listed for the type is refused, so a typo is not silently
 * ignored. Units: one image, seconds of video, characters of speech text, and for
 * transcription nothing until the worker reports the audio's length.
 */
export function checkInputs(type: JobType, raw: Record<string, unknown>, engine: Engine): CheckedInputs {
  for (const k of Object.keys(raw))
    if (!ALLOWED[type].includes(k)) bad(`inputs.${k} is not an input of ${type} jobs.`, k);
  switch (type) {
    case 'image': {
      const aspect = raw['aspect_ratio'] ?? '16:9';
      if (typeof aspect !== 'string' || !ASPECTS.includes(aspect))
        bad(`inputs.aspect_ratio is one of ${ASPECTS.join(', ')}.`, 'aspect_ratio');
      return { inputs: { ...promptInputs(raw), aspect_ratio: aspect }, units: 1 };
    }
    case 'video': {
      const max = engine.max_duration_sec ?? MAX_VIDEO_SECONDS;
      const d = raw['duration_sec'] ?? 5;
      if (typeof d !== 'number' || !Number.isFinite(d) || d <= 0 || d > max)
        bad(`inputs.duration_sec is more than 0 and at most ${max} seconds for this engine.`, 'duration_sec');
      return { inputs: { ...promptInputs(raw), duration_sec: d }, units: d as number };
    }
    case 'text-to-speech': {
      const text = raw['text'];
      if (typeof text !== 'string' || text.trim() === '' || text.length > MAX_SPEECH_TEXT)
        bad(`inputs.text is required: 1-${MAX_SPEECH_TEXT} characters.`, 'text');
      const voice = raw['voice'];
      if (voice !== undefined && (typeof voice !== 'string' || !/^[a-z0-9_-]{1,64}$/i.test(voice)))
        bad('inputs.voice is a voice name: 1-64 of letters, digits, _ and -.', 'voice');
      const format = raw['format'] ?? 'wav';
      if (format !== 'wav' && format !== 'mp3') bad('inputs.format is wav or mp3.', 'format');
      const t = text as string;
      return { inputs: { text: t, format, ...(voice !== undefined ? { voice } : {}) }, units: t.length };
    }
    case 'transcription': {
      const url = raw['audio_url'];
      if (typeof url !== 'string' || url.length > 2000 || !isHttpsUrl(url))
        bad('inputs.audio_url is required: the HTTPS address of the audio file.', 'audio_url');
      const language = raw['language'] ?? 'auto';
      if (typeof language !== 'string' || (language !== 'auto' && !ISO_639_1.test(language)))
        bad('inputs.language is auto or a two-letter ISO 639-1 code.', 'language');
      return { inputs: { audio_url: url, language }, units: 0 };
    }
  }
}

/** Image and video share the prompt, negative prompt and seed. */
function promptInputs(raw: Record<string, unknown>): Record<string, unknown> {
  const prompt = raw['prompt'];
  if (typeof prompt !== 'string' || prompt.trim() === '' || prompt.length > MAX_PROMPT)
    bad(`inputs.prompt is required: 1-${MAX_PROMPT} characters.`, 'prompt');
  const neg = raw['negative_prompt'];
  if (neg !== undefined && (typeof neg !== 'string' || neg.length > MAX_PROMPT))
    bad(`inputs.negative_prompt is text of at most ${MAX_PROMPT} characters.`, 'negative_prompt');
  const seed = raw['seed'];
  if (
    seed !== undefined &&
    !(Number.isInteger(seed) && (seed as number) >= 0 && (seed as number) <= 4294967295)
  )
    bad('inputs.seed is an integer from 0 to 4294967295.', 'seed');
  return { prompt, seed: seed ?? 0, ...(neg !== undefined ? { negative_prompt: neg } : {}) };
}

function isHttpsUrl(s: string): boolean {
  try {
    return new URL(s).protocol === 'https:';
  } catch {
    return false;
  }
}

function bad(message: string, input: string): never {
  throw gpuErrors.inputs(message, `/body/inputs/${input}`);
}
