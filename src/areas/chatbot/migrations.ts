import type { Kysely, Migration } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
type AnyDb = Kysely<any>;

export const BOT_STATUSES = ['active', 'draft', 'disabled'] as const;
export const CITATION_STYLES = ['inline', 'footnotes', 'none'] as const;
export const SOURCE_KINDS = ['text', 'url', 'object'] as const;
export const SOURCE_STATUSES = ['pending', 'indexing', 'ready', 'failed'] as const;

export interface ChatbotBotsTable {
  id: string;
  customer_id: string;
  slug: string;
  name: string;
  status: string;
  language: string;
  system_prompt: string;
  model: string;
  temperature: number;
  citation_style: string;
  created_at: number;
  updated_at: number;
}

export interface ChatbotSourcesTable {
  id: string;
  bot_id: string;
  customer_id: string;
  kind: string;
  title: string;
  /** A web page's address; `s3://<bucket>/<key>` of an object source. */
  url: string | null;
  /** The text of a `text` source; the fetched text of a `url` or `object` source once indexed. */
  content: string | null;
  status: string;
  error: string | null;
  chunk_count: number;
  created_at: number;
  indexed_at: number | null;
}

export interface ChatbotChunksTable {
  id: string;
  source_id: string;
  bot_id: string;
  ordinal: number;
  title: string;
  url: string | null;
  text: string;
}

export interface ChatbotSessionsTable {
  id: string;
  bot_id: string;
  customer_id: string;
  created_at: number;
  last_message_at: number;
}

export interface ChatbotMessagesTable {
  id: string;
  session_id: string;
  role: string;
  content: string;
  citations: string;
  tokens_input: number;
  tokens_output: number;
  created_at: number;
}

export interface ChatbotTables {
  chatbot_bots: ChatbotBotsTable;
  chatbot_sources: ChatbotSourcesTable;
  chatbot_chunks: ChatbotChunksTable;
  chatbot_sessions: ChatbotSessionsTable;
  chatbot_messages: ChatbotMessagesTable;
}

export const chatbotMigrations: Record<string, Migration> = {
  '2026-11-24-2130-chatbot': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('chatbot_bots')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('language', 'text', (c) => c.notNull())
        .addColumn('system_prompt', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('temperature', 'real', (c) => c.notNull())
        .addColumn('citation_style', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('chatbot_bots_customer_slug', ['customer_id', 'slug'])
        .execute();
      await db.schema
        .createTable('chatbot_sources')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('bot_id', 'text', (c) => c.notNull().references('chatbot_bots.id').onDelete('cascade'))
        .addColumn('customer_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('url', 'text')
        .addColumn('content', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('chunk_count', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('indexed_at', 'bigint')
        .execute();
      await db.schema.createIndex('chatbot_sources_bot').on('chatbot_sources').column('bot_id').execute();
      await db.schema
        .createTable('chatbot_chunks')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('source_id', 'text', (c) =>
          c.notNull().references('chatbot_sources.id').onDelete('cascade'),
        )
        .addColumn('bot_id', 'text', (c) => c.notNull())
        .addColumn('ordinal', 'integer', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('url', 'text')
        .addColumn('text', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('chatbot_chunks_bot').on('chatbot_chunks').column('bot_id').execute();
      await db.schema
        .createTable('chatbot_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('bot_id', 'text', (c) => c.notNull().references('chatbot_bots.id').onDelete('cascade'))
        .addColumn('customer_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_message_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('chatbot_messages')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('session_id', 'text', (c) =>
          c.notNull().references('chatbot_sessions.id').onDelete('cascade'),
        )
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('citations', 'text', (c) => c.notNull())
        .addColumn('tokens_input', 'integer', (c) => c.notNull())
        .addColumn('tokens_output', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('chatbot_messages_session')
        .on('chatbot_messages')
        .columns(['session_id', 'created_at'])
        .execute();
    },
  },
};
