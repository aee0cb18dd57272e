import { readFileSync } from 'node:fs';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import shippedCatalogue from './catalogue.json' with { type: 'json' };

/**
 * What the GPU service offers: engines, presets and prices, from a data file the operator may
 * replace (FJORD_GPU_CATALOGUE; the shipped one is `catalogue.json`), checked whole at start.
 * Engines are stable identifiers; an engine is `available` only while a worker serving it has
 * been seen in the last minute.
 *
 * The `reference-*` engines are served by Fjord's own reference worker (`fjord gpu-worker`): a
 * deterministic test pattern, test clip or tone sequence. They are not generative models and are
 * never presented as such; they exist so the whole path — queue, lease, progress, outputs, costs —
 * runs and is tested without a GPU.
 */
export const JOB_TYPES = ['image', 'video', 'text-to-speech', 'transcription'] as const;
export type JobType = (typeof JOB_TYPES)[number];

export const CURRENCIES = ['NOK', 'SEK', 'DKK', 'EUR', 'USD'] as const;

/** Per type: the longest a job may process, and the largest output file a worker may upload. */
export const TYPE_LIMITS: Record<JobType, { timeLimitSeconds: number; maxOutputBytes: number }> = {
  image: { timeLimitSeconds: 5 * 60, maxOutputBytes: 64 * 2 ** 20 },
  video: { timeLimitSeconds: 10 * 60, maxOutputBytes: 512 * 2 ** 20 },
  'text-to-speech': { timeLimitSeconds: 5 * 60, maxOutputBytes: 10 * 2 ** 20 },
  transcription: { timeLimitSeconds: 30 * 60, maxOutputBytes: 10 * 2 ** 20 },
};
/** Image outputs are at most 4K: neither side of a PNG longer than this. */
export const MAX_IMAGE_SIDE = 4096;
/** Video outputs are at most 30 s; transcription inputs at most an hour of audio. */
export const MAX_VIDEO_SECONDS = 30;
export const MAX_TRANSCRIPTION_SECONDS = 3600;

const Engine = Type.Object(
  {
    engine: Type.String({ pattern: '^[a-z0-9][a-z0-9.-]{0,63}$' }),
    name: Type.String({ minLength: 1 }),
    description: Type.String(),
    type: Type.Union(JOB_TYPES.map((t) => Type.Literal(t))),
    tier_required: Type.Union([Type.String(), Type.Null()]),
    max_duration_sec: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: MAX_VIDEO_SECONDS })),
    price: Type.Object({
      sku: Type.String(),
      unit: Type.String(),
      display_name: Type.String(),
      amounts: Type.Object(Object.fromEntries(CURRENCIES.map((c) => [c, Type.Number({ minimum: 0 })]))),
    }),
  },
  { additionalProperties: false },
);
const CatalogueFile = Type.Object({
  engines: Type.Array(Engine, { minItems: 1 }),
  presets: Type.Array(
    Type.Object({
      name: Type.String({ minLength: 1 }),
      type: Type.Union(JOB_TYPES.map((t) => Type.Literal(t))),
      description: Type.String(),
    }),
  ),
});
export type Engine = Static<typeof Engine>;

/** Plans in order: a tier is met by its plan and every plan above it. */
const PLAN_ORDER = ['free', 'basic', 'pro', 'enterprise'];
export const planMeets = (plan: string, tier: string | null) =>
  tier === null || PLAN_ORDER.indexOf(plan) >= PLAN_ORDER.indexOf(tier);

export class GpuCatalogue {
  readonly engines: readonly Engine[];
  readonly presets: readonly { name: string; type: JobType; description: string }[];
  private readonly byName: Map<string, Engine>;

  /** `data`: the shipped catalogue, or an operator's (a bad file stops the start, naming the fault). */
  constructor(data: unknown = shippedCatalogue, source = 'catalogue.json') {
    if (!Value.Check(CatalogueFile, data)) {
      const first = [...Value.Errors(CatalogueFile, data)][0];
      throw new Error(`GPU catalogue ${source}: ${first?.path || '/'} ${first?.message}`);
    }
    this.byName = new Map(data.engines.map((e) => [e.engine, e]));
    if (this.byName.size !== data.engines.length)
      throw new Error(`GPU catalogue ${source}: an engine is listed twice`);
    for (const e of data.engines)
      if (e.tier_required !== null && !PLAN_ORDER.includes(e.tier_required))
        throw new Error(
          `GPU catalogue ${source}: engine ${e.engine} requires unknown plan ${e.tier_required}`,
        );
    this.engines = data.engines;
    this.presets = data.presets;
  }

  /** The operator's file when one is named, else the shipped catalogue. */
  static load(path: string | undefined): GpuCatalogue {
    if (!path) return new GpuCatalogue();
    let data: unknown;
    try {
      data = JSON.parse(readFileSync(path, 'utf8'));
    } catch (err) {
      throw new Error(`GPU catalogue ${path}: ${(err as Error).message}`);
    }
    return new GpuCatalogue(data, path);
  }

  engine(name: string): Engine | undefined {
    return this.byName.get(name);
  }

  /** One entry per engine and currency. */
  pricing() {
    return this.engines.flatMap((e) =>
      CURRENCIES.map((currency) => ({
        engine: e.engine,
        sku: e.price.sku,
        type: e.type,
        unit: e.price.unit,
        price_per_unit: e.price.amounts[currency]!,
        currency,
        display_name: e.price.display_name,
        description: `${e.name}, per ${e.price.unit}`,
        tier_required: e.tier_required,
      })),
    );
  }

  pricePerUnit(engine: string, currency: string): number {
    return this.byName.get(engine)?.price.amounts[currency] ?? 0;
  }
}
