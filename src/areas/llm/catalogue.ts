import type { LlmCategory, LlmModelSettings, LlmUpstreamSettings } from '../../config/llm-settings.js';

/** One model alias as customers see it, with where its requests go. */
export interface ModelEntry {
  id: string;
  category: LlmCategory;
  ownedBy: string;
  /** Epoch seconds: when this Fjord started offering it (the list's `created`). */
  created: number;
  contextTokens: number;
  maxOutputTokens: number;
  /** Empty for the simulated model. */
  routes: { upstream: LlmUpstreamSettings; model: string }[];
  pricePer1kInput: Partial<Record<string, number>>;
  pricePer1kOutput: Partial<Record<string, number>>;
  timeoutMs: number;
  simulated: boolean;
  /** `tools` and `tool_choice` go upstream (the alias says its upstreams support them). */
  tools: boolean;
}

export const SIMULATED_MODEL = 'fjord-echo';

/** Defaults for an alias that leaves them out: the low end of what the platform's models offer. */
const DEFAULT_CONTEXT = 8192;
const DEFAULT_OUTPUT = 1024;
const DEFAULT_TIMEOUT_MS = 30_000;

/** The model aliases of this Fjord, from FJORD_LLM_MODELS and FJORD_LLM_UPSTREAMS. */
export class ModelCatalogue {
  private readonly entries = new Map<string, ModelEntry>();
  private readonly defaults = new Set<string>();

  constructor(
    settings: {
      upstreams: LlmUpstreamSettings[];
      models: Record<string, LlmModelSettings>;
      simulated: boolean;
    },
    startedAtSeconds: number,
  ) {
    const upstreams = new Map(settings.upstreams.map((u) => [u.name, u]));
    for (const [id, m] of Object.entries(settings.models)) {
      if (m.default) this.defaults.add(id);
      this.entries.set(id, {
        id,
        category: m.category,
        ownedBy: m.owned_by ?? 'fjord',
        created: startedAtSeconds,
        contextTokens: m.context_tokens ?? DEFAULT_CONTEXT,
        maxOutputTokens: m.max_output_tokens ?? DEFAULT_OUTPUT,
        routes: m.routes.map((r) => ({ upstream: upstreams.get(r.upstream)!, model: r.model })),
        pricePer1kInput: m.price_per_1k_input ?? {},
        pricePer1kOutput: m.price_per_1k_output ?? {},
        timeoutMs: m.timeout_ms ?? DEFAULT_TIMEOUT_MS,
        simulated: false,
        tools: m.tools === true,
      });
    }
    if (settings.simulated && !this.entries.has(SIMULATED_MODEL)) {
      this.entries.set(SIMULATED_MODEL, {
        id: SIMULATED_MODEL,
        category: 'chat',
        // The list has no other field to say it: the owner says it is no real model.
        ownedBy: 'fjord-simulated',
        created: startedAtSeconds,
        contextTokens: DEFAULT_CONTEXT,
        maxOutputTokens: DEFAULT_OUTPUT,
        routes: [],
        pricePer1kInput: {},
        pricePer1kOutput: {},
        timeoutMs: DEFAULT_TIMEOUT_MS,
        simulated: true,
        tools: false,
      });
    }
  }

  get(id: string): ModelEntry | undefined {
    return this.entries.get(id);
  }

  list(): ModelEntry[] {
    return [...this.entries.values()].sort((a, b) => a.id.localeCompare(b.id));
  }

  /**
   * The alias a moderation request without `model` goes to: the one marked `default`, else the
   * first moderation alias by name (OpenAI too picks its current moderation model).
   */
  defaultModeration(): ModelEntry | undefined {
    const moderation = this.list().filter((m) => m.category === 'moderation');
    return moderation.find((m) => this.defaults.has(m.id)) ?? moderation[0];
  }

  get hasRealModels(): boolean {
    return this.list().some((m) => !m.simulated);
  }
}
