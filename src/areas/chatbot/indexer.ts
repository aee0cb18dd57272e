import type { Logger } from 'pino';
import { lazyPackage } from '../../kernel/lazy.js';

const undici = lazyPackage<typeof import('undici')>('undici');

import type { Clock } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import { assertSafeTarget, publicOnlyDispatcher } from '../../kernel/webhooks/ssrf-guard.js';
import { chunkText, htmlToText } from './chunking.js';
import type { ChatbotRepo } from './repo.js';

/** Largest page fetched for a URL source. */
const MAX_FETCH_BYTES = 5 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 15_000;

/**
 * Turns a source into passages: a text source as it is, a URL source fetched (through the SSRF
 * guard: public addresses only, checked again at connect time, unless the operator allows
 * private targets) and reduced to text. Runs as a job, so a slow page never holds a request.
 */
export class Indexer {
  /** Made on the first fetch: undici is not loaded at start for a feature that may never run. */
  private dispatcherMade?: ReturnType<typeof publicOnlyDispatcher>;
  constructor(
    private readonly repo: ChatbotRepo,
    private readonly clock: Clock,
    private readonly allowPrivate: boolean,
    private readonly onIndexed: (botId: string) => void,
    private readonly log: Logger,
    /** Reads a customer's object (the storage area's service), when object storage is in the build. */
    private readonly objects?: (
      customerId: string,
      bucket: string,
      key: string,
      maxBytes: number,
    ) => Promise<{ body: Buffer; contentType: string }>,
  ) {}

  private dispatcher() {
    if (this.allowPrivate) return undefined;
    this.dispatcherMade ??= publicOnlyDispatcher();
    return this.dispatcherMade;
  }

  async index(sourceId: string): Promise<void> {
    const source = await this.repo.sourceById(sourceId);
    if (!source) return; // deleted meanwhile
    await this.repo.updateSource(source.id, { status: 'indexing', error: null });
    try {
      let { title, content } = source;
      if (source.kind === 'url') {
        const page = await this.fetchPage(source.url!);
        content = page.text;
        if (page.title && title === source.url) title = page.title;
      } else if (source.kind === 'object') {
        content = await this.readObject(source.customer_id, source.url!);
      }
      const chunks = chunkText(content ?? '').map((text, ordinal) => ({
        id: newId(),
        source_id: source.id,
        bot_id: source.bot_id,
        ordinal,
        title,
        url: source.url,
        text,
      }));
      await this.repo.replaceChunks(source.id, chunks);
      await this.repo.updateSource(source.id, {
        status: 'ready',
        title,
        content,
        chunk_count: chunks.length,
        indexed_at: this.clock.nowMs(),
      });
    } catch (err) {
      this.log.info({ source: source.id, err: (err as Error).message }, 'chatbot source not indexed');
      await this.repo.updateSource(source.id, {
        status: 'failed',
        error: (err as Error).message.slice(0, 500),
      });
    }
    this.onIndexed(source.bot_id);
  }

  /** A customer's own object (`s3://bucket/key`): text, Markdown or HTML, at most 5 MB. */
  private async readObject(customerId: string, address: string): Promise<string> {
    if (!this.objects) throw new Error('object storage is not in this build');
    const m = /^s3:\/\/([^/]+)\/(.+)$/.exec(address);
    if (!m) throw new Error(`not an object address: ${address}`);
    const { body, contentType } = await this.objects(customerId, m[1]!, m[2]!, MAX_FETCH_BYTES);
    if (!/^text\/|markdown|html|json/.test(contentType) && !/\.(txt|md|markdown|html?)$/i.test(m[2]!))
      throw new Error(`${contentType} objects cannot be indexed: give text, Markdown or HTML`);
    const text = body.toString('utf8');
    return /html/.test(contentType) || /\.html?$/i.test(m[2]!) ? htmlToText(text).text : text;
  }

  private async fetchPage(url: string): Promise<{ title: string | null; text: string }> {
    await assertSafeTarget(url, this.allowPrivate);
    // undici's own fetch: the guard's dispatcher is an undici Agent.
    const res = await undici().fetch(url, {
      redirect: 'error',
      headers: { 'user-agent': 'Fjord-Chatbot-Indexer/1', accept: 'text/html, text/plain, text/markdown' },
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      dispatcher: this.dispatcher(),
    });
    if (!res.ok) throw new Error(`the page answered ${res.status}`);
    const length = Number(res.headers.get('content-length') ?? 0);
    if (length > MAX_FETCH_BYTES) throw new Error(`the page is larger than ${MAX_FETCH_BYTES} bytes`);
    const body = await res.text();
    if (body.length > MAX_FETCH_BYTES) throw new Error(`the page is larger than ${MAX_FETCH_BYTES} bytes`);
    const type = res.headers.get('content-type') ?? '';
    return type.includes('html') ? htmlToText(body) : { title: null, text: body };
  }
}
