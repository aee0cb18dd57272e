import { mkdtempSync, rmSync } from 'node:fs';
import { connect, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mariadb from 'mariadb';
import pg from 'pg';
import { EmbeddedMariadb, hasMariadbBinaries } from '../../src/areas/databases/engines/embedded-mariadb.js';
import { EmbeddedPostgres, findPostgresBinDir } from '../../src/areas/databases/engines/embedded-postgres.js';

/**
 * One PostgreSQL and one MariaDB server per test file — Fjord's own embedded engine classes,
 * started once in a temp dir — handed to every TestFjord of the file as external servers
 * (with the managed pg_hba.conf), so no test waits for initdb more than once.
 */
export interface SharedEngines {
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startSharedEngines(): Promise<SharedEngines> {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-dbengines-'));
  const binDir = findPostgresBinDir();
  if (!binDir || !hasMariadbBinaries())
    throw new Error('postgresql and mariadb-server must be installed for these tests');
  const pgServer = new EmbeddedPostgres(binDir, { dir: join(dir, 'pg'), host: '127.0.0.1', fast: true });
  const myServer = new EmbeddedMariadb({ dir: join(dir, 'my'), host: '127.0.0.1', fast: true });
  const [pgEp, myEp] = await Promise.all([pgServer.start(), myServer.start()]);
  return {
    env: {
      FJORD_DATABASE_ENGINES: 'external',
      FJORD_POSTGRES_ADMIN_URL: pgEp.adminUrl,
      FJORD_POSTGRES_HBA_FILE: pgEp.hbaFile!,
      FJORD_MARIADB_ADMIN_URL: myEp.adminUrl,
      FJORD_DATABASE_ENCRYPTED_ENGINES: 'mariadb',
    },
    async stop() {
      await Promise.all([pgServer.stop(), myServer.stop()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A TCP socket to host:port from a chosen local address (127.0.0.2 is loopback too on Linux). */
const socketFrom = (localAddress: string | undefined, host: string, port: number) =>
  connect({ host, port, ...(localAddress ? { localAddress } : {}) });

export interface Conn {
  query(sql: string): Promise<unknown[]>;
  end(): Promise<void>;
}

/** Connects as a customer would, with the real client library of the engine. */
export async function connectAs(
  dbType: 'postgresql' | 'mariadb',
  c: { host: string; port: number; username: string; password: string; database: string },
  localAddress?: string,
): Promise<Conn> {
  if (dbType === 'postgresql') {
    const client = new pg.Client({
      host: c.host,
      port: c.port,
      user: c.username,
      password: c.password,
      database: c.database,
      connectionTimeoutMillis: 5000,
      // pg calls connect(port, host) on the stream it is given; bind the local end first.
      stream: () => {
        const s = new Socket();
        const original = s.connect.bind(s);
        s.connect = ((port: number, host: string) =>
          original({ port, host, localAddress })) as typeof s.connect;
        return s;
      },
    } as pg.ClientConfig);
    client.on('error', () => {});
    await client.connect();
    return {
      query: async (sql) => (await client.query(sql)).rows,
      end: () => client.end().catch(() => {}),
    };
  }
  const conn = await mariadb.createConnection({
    host: c.host,
    port: c.port,
    user: c.username,
    password: c.password,
    database: c.database,
    connectTimeout: 5000,
    stream: (() => socketFrom(localAddress, c.host, c.port)) as never,
  });
  conn.on('error', () => {});
  return {
    query: async (sql) => {
      const r = await conn.query(sql);
      return Array.isArray(r) ? r : [];
    },
    end: () => conn.end().catch(() => {}),
  };
}
