/**
 * What the GPU service offers: engines, presets and prices. Engines are stable identifiers; an
 * engine is `available` only while a worker serving it has been seen in the last minute.
 *
 * The `reference-*` engines are served by Fjord's own reference worker (`fjord gpu-worker`): it
 * draws a deterministic test pattern (and, for video, a short test clip with ffmpeg) from the
 * prompt and seed. It is not a generative model and never presented as one; it exists so the
 * whole path — queue, lease, progress, outputs, costs — runs and is tested without a GPU.
 */
export type JobType = 'image' | 'video';

export interface Engine {
  engine: string;
  name: string;
  description: string;
  type: JobType;
  /** The plan a customer needs (null: every plan). */
  tier_required: string | null;
  /** Longest output a job may ask for (video). */
  maxDurationSec?: number;
}

export const ENGINES: Engine[] = [
  {
    engine: 'reference-image',
    name: 'Reference renderer (image)',
    description:
      'A deterministic test pattern from the prompt and seed, at the asked aspect ratio. Not generative.',
    type: 'image',
    tier_required: null,
  },
  {
    engine: 'reference-video',
    name: 'Reference renderer (video)',
    description: 'A deterministic test clip (ffmpeg test source) of the asked duration. Not generative.',
    type: 'video',
    tier_required: null,
    maxDurationSec: 30,
  },
  {
    engine: 'sdxl',
    name: 'Stable Diffusion XL',
    description: 'Text to image, served by an operator’s GPU workers.',
    type: 'image',
    tier_required: 'pro',
  },
  {
    engine: 'video-diffusion',
    name: 'Video diffusion',
    description: 'Text to short video, served by an operator’s GPU workers.',
    type: 'video',
    tier_required: 'pro',
    maxDurationSec: 30,
  },
];

export const PRESETS = [
  { name: 'photo', type: 'image', description: 'Photographic look, natural light.' },
  { name: 'illustration', type: 'image', description: 'Flat illustration with clean lines.' },
  { name: 'cinematic', type: 'video', description: 'Slow camera moves, film grain.' },
];

export const CURRENCIES = ['NOK', 'SEK', 'DKK', 'EUR', 'USD'] as const;

/** Per image, or per second of video; one entry per engine and currency. */
const PRICE: Record<string, { sku: string; unit: string; display: string; amounts: number[] }> = {
  'reference-image': {
    sku: 'gpu-ref-img',
    unit: 'image',
    display: 'Reference image',
    amounts: [0, 0, 0, 0, 0],
  },
  'reference-video': {
    sku: 'gpu-ref-vid',
    unit: 'second',
    display: 'Reference video',
    amounts: [0, 0, 0, 0, 0],
  },
  sdxl: { sku: 'gpu-sdxl-img', unit: 'image', display: 'SDXL image', amounts: [0.4, 0.4, 0.3, 0.04, 0.04] },
  'video-diffusion': {
    sku: 'gpu-vd-sec',
    unit: 'second',
    display: 'Video second',
    amounts: [1.1, 1.1, 0.8, 0.1, 0.1],
  },
};

export function pricing() {
  return ENGINES.flatMap((e) => {
    const p = PRICE[e.engine]!;
    return CURRENCIES.map((currency, i) => ({
      engine: e.engine,
      sku: p.sku,
      type: e.type,
      unit: p.unit,
      price_per_unit: p.amounts[i]!,
      currency,
      display_name: p.display,
      description: `${e.name}, per ${p.unit}`,
      tier_required: e.tier_required,
    }));
  });
}

export function pricePerUnit(engine: string, currency: string): number {
  const i = CURRENCIES.indexOf(currency as (typeof CURRENCIES)[number]);
  return PRICE[engine]?.amounts[Math.max(0, i)] ?? 0;
}

/** Processing time limits per type (seconds). */
export const TIME_LIMIT_SECONDS: Record<JobType, number> = { image: 5 * 60, video: 10 * 60 };

/** Plans in order: a tier is met by its plan and every plan above it. */
const PLAN_ORDER = ['free', 'basic', 'pro', 'enterprise'];
export const planMeets = (plan: string, tier: string | null) =>
  tier === null || PLAN_ORDER.indexOf(plan) >= PLAN_ORDER.indexOf(tier);
