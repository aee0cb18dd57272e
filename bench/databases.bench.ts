// Seconds to create, rotate, snapshot (100 MB) and restore a database, per engine, through
// Fjord's API — each next to a reference: the same work done directly on the same server in
// the same run (admin SQL for create and rotate; pg_dump/mariadb-dump | gzip and
// gunzip | psql/mariadb for snapshot and restore).
//
//   npm run bench:databases [-- --mb 100 --rounds 3]
//
// Fjord runs in this process (SQLite store in a temp dir, emulator off) with its embedded
// engines, started as in production (fsync on). Figures go in bench/README.md.
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { createGunzip, createGzip } from 'node:zlib';
import mariadb from 'mariadb';
import pg from 'pg';
import { Fjord } from '../src/app/fjord.js';
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/kernel/log.js';

const { values } = parseArgs({
  options: { mb: { type: 'string', default: '100' }, rounds: { type: 'string', default: '3' } },
});
const MB = Number(values.mb);
const ROUNDS = Number(values.rounds);
const dir = mkdtempSync(join(tmpdir(), 'fjord-dbbench-'));

const config = loadConfig({
  FJORD_DATA_DIR: dir,
  FJORD_DEV_CREDENTIALS: '0',
  FJORD_LOG_LEVEL: 'warn',
  FJORD_DATABASE_ENGINES: 'embedded',
  FJORD_RATE_LIMITS: JSON.stringify({
    'database.create': { points: 100000 },
    'database.snapshot': { points: 100000 },
    database: { points: 1000000 },
  }),
});
const fjord = await Fjord.create({ config, log: createLogger('warn') });
const customer = await fjord.kernel.identity.createCustomer({
  email: 'bench@example.test',
  plan: 'enterprise',
});
const key = (await fjord.kernel.identity.createServiceKey(customer.id, 'database', 'bench')).key;

async function api(method: string, url: string, body?: unknown) {
  const r = await fjord.http.inject({
    method: method as 'GET',
    url,
    headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
    payload: body ? JSON.stringify(body) : undefined,
  });
  if (r.statusCode >= 300) throw new Error(`${method} ${url}: ${r.statusCode} ${r.body}`);
  return JSON.parse(r.body);
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return (performance.now() - t0) / 1000;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function tool(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  stdin?: string,
  stdout?: string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
    const done = new Promise<void>((res, rej) => {
      child.once('error', rej);
      child.once('close', (code) => (code === 0 ? res() : rej(new Error(`${cmd} exited ${code}`))));
    });
    let feed: Promise<unknown> = Promise.resolve();
    if (stdin) feed = pipeline(createReadStream(stdin), createGunzip(), child.stdin!);
    else child.stdin!.end();
    let drain: Promise<unknown> = Promise.resolve();
    if (stdout) drain = pipeline(child.stdout!, createGzip(), createWriteStream(stdout));
    else child.stdout!.resume();
    Promise.all([feed, drain, done]).then(() => resolve(), reject);
  });
}

interface Row {
  engine: string;
  op: string;
  fjord: number;
  reference: number;
}
const rows: Row[] = [];

for (const dbType of ['postgresql', 'mariadb'] as const) {
  const engines = await api('GET', '/v1/databases/engines'); // starts the embedded servers
  const version = engines.engines.find((e: { name: string }) => e.name === dbType).default_version;
  console.log(`\n${dbType} ${version}`);

  // create and rotate: Fjord's API against the bare admin SQL it runs underneath.
  const created: { technical_name: string; username: string; password: string }[] = [];
  const createF: number[] = [];
  const createR: number[] = [];
  const rotateF: number[] = [];
  const rotateR: number[] = [];
  const ref = await referenceClient(dbType, fjord);
  for (let i = 0; i < ROUNDS; i++) {
    createF.push(
      await timed(async () =>
        created.push(await api('POST', '/v1/databases', { db_type: dbType, db_name: `b${i}` })),
      ),
    );
    createR.push(await timed(() => ref.create(`ref_${i}`)));
    rotateF.push(
      await timed(() =>
        api('POST', `/v1/databases/${dbType}/${created[i]!.technical_name}/credentials/rotate`),
      ),
    );
    rotateR.push(await timed(() => ref.rotate(`ref_${i}`)));
  }
  rows.push({ engine: dbType, op: 'create', fjord: median(createF), reference: median(createR) });
  rows.push({ engine: dbType, op: 'rotate', fjord: median(rotateF), reference: median(rotateR) });

  // snapshot and restore of MB megabytes of table data.
  const target = created[0]!;
  const fill = await api('POST', `/v1/databases/${dbType}/${target.technical_name}/credentials/rotate`);
  await ref.fill(target.technical_name, fill, MB);
  const info = await api('GET', `/v1/databases/${dbType}/${target.technical_name}/info`);
  console.log(`  filled ${target.technical_name}: ${info.size_mb} MB on the server`);
  let snapshotId = '';
  const snapF = await timed(async () => {
    snapshotId = (await api('POST', `/v1/databases/${dbType}/${target.technical_name}/snapshots`, {}))
      .snapshot_id;
  });
  const dumpFile = join(dir, `${dbType}.sql.gz`);
  const snapR = await timed(() => ref.dump(target.technical_name, dumpFile));
  rows.push({ engine: dbType, op: `snapshot ${MB} MB`, fjord: snapF, reference: snapR });
  const restoreF = await timed(() =>
    api('POST', `/v1/databases/${dbType}/${target.technical_name}/restore`, { snapshot_id: snapshotId }),
  );
  await ref.create('ref_restore');
  const restoreR = await timed(() => ref.restore('ref_restore', dumpFile));
  rows.push({ engine: dbType, op: `restore ${MB} MB`, fjord: restoreF, reference: restoreR });
  await ref.close();
}

console.log('\n| engine | operation | Fjord API (s) | reference (s) | ratio |');
console.log('| --- | --- | ---: | ---: | ---: |');
for (const r of rows) {
  console.log(
    `| ${r.engine} | ${r.op} | ${r.fjord.toFixed(3)} | ${r.reference.toFixed(3)} | ${(r.fjord / r.reference).toFixed(2)}× |`,
  );
}
await fjord.stop();
rmSync(dir, { recursive: true, force: true });

/** The same work done directly against the embedded server, as an operator would by hand. */
async function referenceClient(dbType: 'postgresql' | 'mariadb', f: Fjord) {
  const base = join(f.kernel.config.dataDir, 'databases', dbType);
  if (dbType === 'postgresql') {
    const sock = join(base, 'data');
    const port = Number(readFileSync(join(base, 'state.json'), 'utf8').match(/\d+/)![0]);
    const client = new pg.Client({ host: sock, port, user: 'postgres', database: 'postgres' });
    await client.connect();
    const env = { PGHOST: sock, PGPORT: String(port), PGUSER: 'postgres' };
    return {
      create: async (n: string) => {
        await client.query(`CREATE ROLE ${n} LOGIN PASSWORD 'x${n}' CONNECTION LIMIT 100`);
        await client.query(`CREATE DATABASE ${n} OWNER ${n} CONNECTION LIMIT 100`);
        await client.query(`REVOKE ALL ON DATABASE ${n} FROM PUBLIC`);
      },
      rotate: (n: string) => client.query(`ALTER ROLE ${n} PASSWORD 'y${n}'`),
      fill: async (db: string, c: { username: string; password: string; port: number }, mb: number) => {
        const u = new pg.Client({
          host: '127.0.0.1',
          port: c.port,
          user: c.username,
          password: c.password,
          database: db,
        });
        await u.connect();
        await u.query('CREATE TABLE big (id bigint primary key, payload text)');
        // 192 hex characters a row (compresses about 2:1, like real text data); with PostgreSQL's
        // row and index overhead a row takes about 270 bytes on disk.
        const rowsWanted = Math.round((mb * 1024 * 1024) / 270);
        await u.query(
          `INSERT INTO big SELECT g, md5(g::text) || md5((g+1)::text) || md5((g+2)::text) || md5((g+3)::text) || md5((g+4)::text) || md5((g+5)::text)
             FROM generate_series(1, ${rowsWanted}) g`,
        );
        await u.end();
      },
      dump: (db: string, file: string) =>
        tool('pg_dump', ['--no-owner', '--no-privileges', db], env, undefined, file),
      restore: (db: string, file: string) =>
        tool('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', db], env, file),
      close: () => client.end(),
    };
  }
  const socket = join(base, 'mariadb.sock');
  const conn = await mariadb.createConnection({ socketPath: socket, user: 'root' });
  const args = ['--no-defaults', '--user=root', `--socket=${socket}`];
  return {
    create: async (n: string) => {
      await conn.query(`CREATE DATABASE ${n}`);
      await conn.query(`CREATE USER '${n}'@'%' IDENTIFIED BY 'x${n}' WITH MAX_USER_CONNECTIONS 100`);
      await conn.query(`GRANT ALL PRIVILEGES ON ${n}.* TO '${n}'@'%'`);
    },
    rotate: (n: string) => conn.query(`ALTER USER '${n}'@'%' IDENTIFIED BY 'y${n}'`),
    fill: async (db: string, c: { username: string; password: string; port: number }, mb: number) => {
      const u = await mariadb.createConnection({
        host: '127.0.0.1',
        port: c.port,
        user: c.username,
        password: c.password,
        database: db,
      });
      await u.query('CREATE TABLE big (id bigint primary key, payload text) ENGINE=InnoDB');
      const rowsWanted = Math.round((mb * 1024 * 1024) / 270);
      await u.query(
        `INSERT INTO big SELECT seq, CONCAT(md5(seq), md5(seq+1), md5(seq+2), md5(seq+3), md5(seq+4), md5(seq+5)) FROM seq_1_to_${rowsWanted}`,
      );
      await u.query('ANALYZE TABLE big'); // so information_schema reports the real size
      await u.end();
    },
    dump: (db: string, file: string) =>
      tool(
        'mariadb-dump',
        [...args, '--single-transaction', '--routines', '--triggers', '--skip-lock-tables', db],
        {},
        undefined,
        file,
      ),
    restore: (db: string, file: string) => tool('mariadb', [...args, db], {}, file),
    close: () => conn.end(),
  };
}
