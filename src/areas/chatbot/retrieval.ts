import type MiniSearch from 'minisearch';
import { lazyPackage } from '../../kernel/lazy.js';
import type { ChatbotChunksTable } from './migrations.js';

/** The search index library, loaded with the first bot's index. */
const miniSearch = lazyPackage<typeof MiniSearch>('minisearch');

export interface Passage {
  title: string;
  url: string | null;
  text: string;
  score: number;
}

/**
 * BM25 retrieval over a bot's passages (MiniSearch), one index per bot kept in memory and built
 * on first use; any change to the bot's sources drops it. When exact terms find too little, prefix
 * and light fuzzy matching let "deploys" find "deploy" and survive a typo.
 */
export class Retrieval {
  private readonly indexes = new Map<string, Promise<MiniSearch<ChatbotChunksTable>>>();

  constructor(private readonly load: (botId: string) => Promise<ChatbotChunksTable[]>) {}

  forget(botId: string): void {
    this.indexes.delete(botId);
  }

  clear(): void {
    this.indexes.clear();
  }

  async search(botId: string, query: string, limit = 4): Promise<Passage[]> {
    let index = this.indexes.get(botId);
    if (!index) {
      index = this.build(botId);
      this.indexes.set(botId, index);
      index.catch(() => this.indexes.delete(botId));
    }
    // Exact terms first: fast, and what a question usually needs. Only when that finds too
    // little, prefix and fuzzy matching (costly on a large vocabulary) widen the search.
    const search = await index;
    let hits = search.search(query, { combineWith: 'OR' });
    if (hits.length < limit)
      hits = search.search(query, {
        prefix: (term) => term.length > 3,
        fuzzy: (term) => (term.length > 5 ? 0.15 : false),
        combineWith: 'OR',
      });
    return hits.slice(0, limit).map((h) => ({
      title: h['title'] as string,
      url: (h['url'] as string | null) ?? null,
      text: h['text'] as string,
      score: h.score,
    }));
  }

  private async build(botId: string) {
    const index = new (miniSearch())<ChatbotChunksTable>({
      fields: ['title', 'text'],
      storeFields: ['title', 'url', 'text'],
      searchOptions: { boost: { title: 2 } },
    });
    index.addAll(await this.load(botId));
    return index;
  }
}
