/** A chat request as OpenAI clients send it; fields Fjord does not know pass through to the upstream. */
export interface ChatRequest {
  model: string;
  messages: { role: string; content?: unknown; [k: string]: unknown }[];
  stream?: boolean;
  temperature?: number | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  top_p?: number | null;
  tools?: unknown;
  tool_choice?: unknown;
  agent_id?: string;
  region?: string;
  stream_options?: { include_usage?: boolean } | null;
  [k: string]: unknown;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** As the upstream reported them (cached tokens, reasoning tokens …), passed on. */
  prompt_tokens_details?: Record<string, unknown>;
  completion_tokens_details?: Record<string, unknown>;
}

/** What the route sends: a JSON body, or a stream of SSE bytes it writes as they come. */
export type ChatOutcome =
  | { kind: 'json'; status: number; body: unknown }
  | { kind: 'stream'; events: AsyncIterable<string> };
