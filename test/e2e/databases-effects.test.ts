import { execFileSync } from 'node:child_process';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Conn, connectAs, type SharedEngines, startSharedEngines } from '../areas/databases-engines.js';
import { createDb, creds, DB_TYPES, dbCustomer } from '../areas/databases-fixtures.js';
import { snapshotObject } from '../areas/databases-snapshot-objects.js';
import { TestFjord } from '../helpers/fjord.js';

// fjord-test: one store (postgres). One pass runs it: the engines' real clients (pg, mariadb)
// are its subject; the databases area's state is tested on both stores by
// test/areas/databases*.test.ts.

/**
 * Each effect of the databases API checked the way a customer would see it: by connecting with
 * the engine's real client library (pg, mariadb) to the real servers.
 */
let engines: SharedEngines;
let t: TestFjord;
const SIZE_QUOTA_MB = 24;

beforeAll(async () => {
  engines = await startSharedEngines();
  // Enterprise databases are capped at 24 MB here, so the size quota can be crossed in a test.
  t = await TestFjord.create({
    ...engines.env,
    FJORD_LIMITS: JSON.stringify({ 'databases.size_mb': { enterprise: SIZE_QUOTA_MB } }),
  });
}, 120_000);

afterAll(async () => {
  await t?.close();
  await engines?.stop();
});

async function refused(p: Promise<Conn>): Promise<string> {
  try {
    const c = await p;
    await c.end();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('the connection was accepted');
}

async function alive(c: Conn): Promise<boolean> {
  try {
    await c.query('SELECT 1');
    return true;
  } catch {
    return false;
  }
}

describe.each(DB_TYPES)('%s, seen from a client', (dbType) => {
  it('gives each database a user that reaches only it; other customers’ credentials cannot connect', async () => {
    const a = await dbCustomer(t);
    const b = await dbCustomer(t);
    const da = await createDb(t, a, dbType, 'mine');
    const db = await createDb(t, b, dbType, 'theirs');
    const ca = await connectAs(dbType, creds(da));
    await ca.query('CREATE TABLE secret (v text)');
    await ca.end();
    // A's user into B's database, B's password on A's user, A's user into the admin database.
    await refused(connectAs(dbType, { ...creds(da), database: db.technical_name }));
    await refused(connectAs(dbType, { ...creds(da), password: db.password }));
    await refused(
      connectAs(dbType, { ...creds(da), database: dbType === 'postgresql' ? 'postgres' : 'mysql' }),
    );
    const cb = await connectAs(dbType, creds(db));
    const seen =
      dbType === 'postgresql'
        ? await cb.query(`SELECT 1 FROM information_schema.tables WHERE table_name = 'secret'`)
        : await cb.query(`SELECT 1 FROM information_schema.TABLES WHERE TABLE_NAME = 'secret'`);
    expect(seen.length, 'B cannot see A’s tables').toBe(0);
    await cb.end();
  });

  it('rotates the password: the new one works and the old one fails at once', async () => {
    const c = await dbCustomer(t);
    const d = await createDb(t, c, dbType, 'rot');
    const r = await t.request('POST', `/v1/databases/${dbType}/${d.technical_name}/credentials/rotate`, {
      key: c.key,
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      db_name: d.technical_name,
      username: d.username,
      host: d.host,
      port: d.port,
    });
    expect(r.body.password).not.toBe(d.password);
    expect(r.body.connection_string).toContain(r.body.password);
    await refused(connectAs(dbType, creds(d)));
    const fresh = await connectAs(dbType, { ...creds(d), password: r.body.password });
    await fresh.end();
  });

  it('enforces the connection limit on the server', async () => {
    const c = await dbCustomer(t);
    const d = await createDb(t, c, dbType, 'lim');
    const p = await t.request('PATCH', `/v1/databases/${dbType}/${d.technical_name}`, {
      key: c.key,
      body: { connection_limit: 10 },
    });
    expect(p.status).toBe(200);
    const open: Conn[] = [];
    for (let i = 0; i < 10; i++) open.push(await connectAs(dbType, creds(d)));
    const info = await t.request('GET', `/v1/databases/${dbType}/${d.technical_name}/info`, { key: c.key });
    expect(info.body).toMatchObject({ connection_count: 10, connection_limit: 10 });
    const why = await refused(connectAs(dbType, creds(d)));
    expect(why).toMatch(/too many connections|max_user_connections/i);
    for (const o of open) await o.end();
  });

  it.runIf(dbType === 'mariadb')(
    'holds the connection limit across the accounts firewall rules make (one per address)',
    async () => {
      const c = await dbCustomer(t);
      const d = await createDb(t, c, dbType, 'limfw');
      const base = `/v1/databases/${dbType}/${d.technical_name}`;
      for (const ip of ['127.0.0.1', '127.0.0.2'])
        expect(
          (await t.request('POST', `${base}/firewall`, { key: c.pat, body: { ip_address: ip } })).status,
        ).toBe(201);
      const limit = await t.request('PATCH', base, { key: c.key, body: { connection_limit: 10 } });
      expect(limit.status, limit.text).toBe(200);
      const open: Conn[] = [];
      for (let i = 0; i < 10; i++)
        open.push(await connectAs(dbType, creds(d), i % 2 ? '127.0.0.2' : '127.0.0.1'));
      const info = await t.request('GET', `${base}/info`, { key: c.key });
      expect(info.body).toMatchObject({ connection_count: 10, connection_limit: 10 });
      // Ten in all: an eleventh is refused from either address.
      await refused(connectAs(dbType, creds(d), '127.0.0.1'));
      await refused(connectAs(dbType, creds(d), '127.0.0.2'));
      for (const o of open) await o.end();
    },
  );

  it('blocks writes over the plan’s size and allows them again once back under it', async () => {
    const c = await dbCustomer(t, 'enterprise');
    const d = await createDb(t, c, dbType, 'big');
    const base = `/v1/databases/${dbType}/${d.technical_name}`;
    const review = async () => {
      await t.kernel.jobs.enqueue('databases.size.review', {});
      await t.kernel.jobs.drain();
    };
    const fill = await connectAs(dbType, creds(d));
    // ~30 MB of rows, over the 24 MB quota.
    await fill.query(
      dbType === 'postgresql'
        ? 'CREATE TABLE filler AS SELECT g AS id, repeat(md5(g::text), 32) AS pad FROM generate_series(1, 30000) g'
        : 'CREATE TABLE filler (id INT PRIMARY KEY, pad TEXT) ENGINE=InnoDB',
    );
    if (dbType === 'mariadb') {
      for (let i = 0; i < 30; i++)
        await fill.query(
          `INSERT INTO filler SELECT seq + ${i * 1000}, REPEAT(MD5(seq), 32) FROM seq_1_to_1000`,
        );
      await fill.query('ANALYZE TABLE filler');
    }
    await fill.end().catch(() => {});
    await review();
    expect((await t.request('GET', `${base}/info`, { key: c.key })).body.status).toBe('read_only');
    const blocked = await connectAs(dbType, creds(d));
    await expect(blocked.query("INSERT INTO filler (id, pad) VALUES (-1, 'x')")).rejects.toThrow(
      /read-only|denied/i,
    );
    // Deleting is what gets a database back under its quota.
    if (dbType === 'postgresql') await blocked.query('SET default_transaction_read_only = off');
    await blocked.query('DROP TABLE filler');
    await blocked.end().catch(() => {});
    await review();
    expect((await t.request('GET', `${base}/info`, { key: c.key })).body.status).toBe('running');
    const again = await connectAs(dbType, creds(d));
    await again.query('CREATE TABLE after_quota (id INT)');
    await again.end();
  });

  it('restart ends every session of that database and no other', async () => {
    const a = await dbCustomer(t);
    const d1 = await createDb(t, a, dbType, 'r1');
    const d2 = await createDb(t, a, dbType, 'r2');
    const s1 = [await connectAs(dbType, creds(d1)), await connectAs(dbType, creds(d1))];
    const s2 = await connectAs(dbType, creds(d2));
    const r = await t.request('POST', `/v1/databases/${dbType}/${d1.technical_name}/restart`, { key: a.key });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, message: `Terminated 2 connection(s) to ${d1.technical_name}.` });
    for (const s of s1) expect(await alive(s)).toBe(false);
    expect(await alive(s2)).toBe(true);
    for (const s of [...s1, s2]) await s.end();
    const again = await connectAs(dbType, creds(d1));
    await again.end();
  });

  it('applies firewall rules at once: 127.0.0.2 admitted, 127.0.0.1 refused, no rules = anyone', async () => {
    const c = await dbCustomer(t);
    const d = await createDb(t, c, dbType, 'fw');
    const before = await connectAs(dbType, creds(d), '127.0.0.1');
    const base = `/v1/databases/${dbType}/${d.technical_name}/firewall`;
    const rule = await t.request('POST', base, { key: c.pat, body: { ip_address: '127.0.0.2' } });
    expect(rule.status, rule.text).toBe(201);
    const inside = await connectAs(dbType, creds(d), '127.0.0.2');
    expect(await alive(inside)).toBe(true);
    await refused(connectAs(dbType, creds(d), '127.0.0.1'));
    expect(await alive(before), 'a session from an address no longer admitted ends').toBe(false);
    // A CIDR block admits its whole range.
    const net = await t.request('POST', base, { key: c.pat, body: { ip_address: '127.0.0.0/30' } });
    expect(net.status).toBe(201);
    const viaNet = await connectAs(dbType, creds(d), '127.0.0.1');
    await viaNet.end();
    await t.request('DELETE', `${base}/${net.body.rule_id}`, { key: c.pat });
    await refused(connectAs(dbType, creds(d), '127.0.0.3'));
    // Rotation keeps the firewall: the new password works from the admitted address only.
    const rot = await t.request('POST', `/v1/databases/${dbType}/${d.technical_name}/credentials/rotate`, {
      key: c.key,
    });
    const rotated = { ...creds(d), password: rot.body.password };
    const ok = await connectAs(dbType, rotated, '127.0.0.2');
    await ok.end();
    await refused(connectAs(dbType, rotated, '127.0.0.1'));
    await t.request('DELETE', `${base}/${rule.body.rule_id}`, { key: c.pat });
    const open = await connectAs(dbType, rotated, '127.0.0.1');
    await open.end();
    await inside.end();
    await before.end();
  });

  it('delete drops the database and its user', async () => {
    const c = await dbCustomer(t);
    const d = await createDb(t, c, dbType, 'gone');
    const s = await connectAs(dbType, creds(d));
    const r = await t.request('DELETE', `/v1/databases/${dbType}/${d.technical_name}`, { key: c.key });
    expect(r.status).toBe(200);
    expect(await alive(s)).toBe(false);
    await s.end();
    const why = await refused(connectAs(dbType, creds(d)));
    expect(why).toMatch(/password authentication failed|does not exist|Access denied|no pg_hba/i);
    // The same name can be made again, as a new, empty database.
    const again = await createDb(t, c, dbType, 'gone');
    const s2 = await connectAs(dbType, creds(again));
    const tables =
      dbType === 'postgresql'
        ? await s2.query(`SELECT 1 FROM pg_tables WHERE schemaname = 'public'`)
        : await s2.query('SHOW TABLES');
    expect(tables.length).toBe(0);
    await s2.end();
  });

  it('snapshots, restores into the same and a new database, and counts against the plan', async () => {
    const c = await dbCustomer(t, 'free');
    const d = await createDb(t, c, dbType, 'snap');
    const s = await connectAs(dbType, creds(d));
    await s.query('CREATE TABLE items (id int primary key, name varchar(20))');
    await s.query(`INSERT INTO items VALUES (1, 'one'), (2, 'two'), (3, 'three')`);
    await s.end();
    const base = `/v1/databases/${dbType}/${d.technical_name}`;
    const snap = await t.request('POST', `${base}/snapshots`, {
      key: c.key,
      body: { name: 'before', description: 'three rows' },
    });
    expect(snap.status, snap.text).toBe(201);
    expect(snap.body).toMatchObject({
      name: 'before',
      status: 'available',
      kind: 'manual',
      format: 'sql.gz',
      encrypted: false,
    });
    expect(snap.body.size_bytes).toBeGreaterThan(100);

    const s2 = await connectAs(dbType, creds(d));
    await s2.query('DELETE FROM items WHERE id > 1');
    await s2.query('CREATE TABLE extra (x int)');
    await s2.end();
    const same = await t.request('POST', `${base}/restore`, {
      key: c.key,
      body: { snapshot_id: snap.body.snapshot_id },
    });
    expect(same.status, same.text).toBe(200);
    expect(same.body).toMatchObject({ success: true, db_name: d.technical_name, new_database: null });
    const s3 = await connectAs(dbType, creds(d));
    expect((await s3.query('SELECT id FROM items ORDER BY id')).length).toBe(3);
    await expect(s3.query('SELECT * FROM extra')).rejects.toThrow();
    await s3.query(`INSERT INTO items VALUES (4, 'four')`); // the restored table belongs to the customer
    await s3.end();

    const copy = await t.request('POST', `${base}/restore`, {
      key: c.key,
      body: { snapshot_id: snap.body.snapshot_id, target_db_name: 'snapcopy' },
    });
    expect(copy.status, copy.text).toBe(200);
    expect(copy.body.new_database.db_name).toBe(
      `cust_${c.shortId}_${dbType === 'postgresql' ? 'pg' : 'mdb'}_snapcopy`,
    );
    const s4 = await connectAs(dbType, creds(copy.body.new_database));
    expect((await s4.query('SELECT id FROM items')).length).toBe(3);
    await s4.end();

    // Free plan: 5 snapshots per database.
    for (let i = 0; i < 4; i++)
      expect((await t.request('POST', `${base}/snapshots`, { key: c.key, body: {} })).status).toBe(201);
    const sixth = await t.request('POST', `${base}/snapshots`, { key: c.key, body: {} });
    expect(sixth.status).toBe(409);
    expect(sixth.body.detail.code).toBe('snapshot_quota_exceeded');
    const list = await t.request('GET', `${base}/snapshots`, { key: c.key });
    expect(list.body).toMatchObject({ total: 5, max_snapshots: 5 });
    const del = await t.request('DELETE', `${base}/snapshots/${snap.body.snapshot_id}`, { key: c.key });
    expect(del.body).toMatchObject({ ok: true, snapshot_id: snap.body.snapshot_id });
    expect((await t.request('GET', `${base}/snapshots`, { key: c.key })).body.total).toBe(4);
    const missing = await t.request('POST', `${base}/restore`, {
      key: c.key,
      body: { snapshot_id: snap.body.snapshot_id },
    });
    expect(missing.status).toBe(404);
  });

  it('takes automatic snapshots on the backup policy’s schedule and keeps its retention', async () => {
    const c = await dbCustomer(t);
    const d = await createDb(t, c, dbType, 'auto');
    const base = `/v1/databases/${dbType}/${d.technical_name}`;
    const initial = await t.request('GET', `${base}/backup-policy`, { key: c.key });
    expect(initial.body).toMatchObject({ enabled: false, frequency: 'daily', next_run_at: null });
    const tooMany = await t.request('PUT', `${base}/backup-policy`, {
      key: c.key,
      body: { enabled: true, retention_count: 31 },
    });
    expect(tooMany.status).toBe(422);
    const put = await t.request('PUT', `${base}/backup-policy`, {
      key: c.key,
      body: { enabled: true, frequency: 'hourly', retention_count: 2 },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ enabled: true, frequency: 'hourly', retention_count: 2 });
    expect(Date.parse(put.body.next_run_at)).toBeGreaterThan(Date.now() - 1000);
    for (let i = 0; i < 3; i++) await t.advance(3600);
    const list = await t.request('GET', `${base}/snapshots`, { key: c.key });
    const auto = list.body.snapshots.filter((s: { kind: string }) => s.kind === 'automatic');
    expect(auto.length).toBe(2);
    expect(auto.every((s: { status: string }) => s.status === 'available')).toBe(true);
    const after = await t.request('GET', `${base}/backup-policy`, { key: c.key });
    expect(after.body.last_run_at).not.toBeNull();
    await t.request('PUT', `${base}/backup-policy`, { key: c.key, body: { enabled: false } });
  });
});

describe.each(DB_TYPES)('%s, rotations at once', (dbType) => {
  it('answers each with a password, and the last one set works from every admitted address', async () => {
    const c = await dbCustomer(t);
    const d = await createDb(t, c, dbType, 'rotrace');
    const base = `/v1/databases/${dbType}/${d.technical_name}`;
    for (const ip of ['127.0.0.1', '127.0.0.2'])
      expect(
        (await t.request('POST', `${base}/firewall`, { key: c.pat, body: { ip_address: ip } })).status,
      ).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: 3 }, () => t.request('POST', `${base}/credentials/rotate`, { key: c.key })),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const working: string[] = [];
    for (const a of answers) {
      const fromBoth = await Promise.all(
        ['127.0.0.1', '127.0.0.2'].map((ip) =>
          connectAs(dbType, { ...creds(d), password: a.body.password }, ip).then(
            async (conn) => {
              await conn.end();
              return true;
            },
            () => false,
          ),
        ),
      );
      if (fromBoth.every(Boolean)) working.push(a.body.password);
      else expect(fromBoth.some(Boolean), 'a password half set across accounts').toBe(false);
    }
    expect(working).toHaveLength(1);
  });
});

describe('restore runs the dump as the customer', () => {
  it('gives a function in the dump no way to the superuser (RESET ROLE during a PostgreSQL restore)', async () => {
    const c = await dbCustomer(t);
    const d = await createDb(t, c, 'postgresql', 'escalate');
    const s = await connectAs('postgresql', creds(d));
    // Harmless when the customer runs it; under a superuser session it would promote them.
    await s.query(`CREATE FUNCTION public.evil(v int) RETURNS boolean LANGUAGE plpgsql AS $$
      BEGIN
        BEGIN
          EXECUTE 'RESET ROLE';
          EXECUTE 'ALTER ROLE ${d.username} SUPERUSER';
        EXCEPTION WHEN OTHERS THEN NULL;
        END;
        RETURN true;
      END $$`);
    await s.query('CREATE TABLE t (v int CHECK (public.evil(v)))');
    await s.query('INSERT INTO t VALUES (1), (2)');
    await s.end();
    const base = `/v1/databases/postgresql/${d.technical_name}`;
    const snap = await t.request('POST', `${base}/snapshots`, { key: c.key, body: {} });
    expect(snap.status, snap.text).toBe(201);
    const r = await t.request('POST', `${base}/restore`, {
      key: c.key,
      body: { snapshot_id: snap.body.snapshot_id },
    });
    expect(r.status, r.text).toBe(200);
    const after = await connectAs('postgresql', creds(d));
    expect(await after.query('SELECT count(*)::int AS n FROM t')).toEqual([{ n: 2 }]);
    expect(await after.query(`SELECT rolsuper FROM pg_roles WHERE rolname = current_user`)).toEqual([
      { rolsuper: false },
    ]);
    // The throwaway login the restore used is gone.
    expect(
      await after.query(`SELECT rolname FROM pg_roles WHERE rolname LIKE 'fjord\\_restore\\_%'`),
    ).toEqual([]);
    await after.end();
  });
});

describe('the command-line clients', () => {
  it('loads a downloaded snapshot with gunzip | psql into another database', async () => {
    const c = await dbCustomer(t);
    const from = await createDb(t, c, 'postgresql', 'dlfrom');
    const into = await createDb(t, c, 'postgresql', 'dlinto');
    execFileSync('psql', [
      from.connection_string,
      '-Xqc',
      "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('downloaded')",
    ]);
    const base = `/v1/databases/postgresql/${from.technical_name}`;
    const snap = await t.request('POST', `${base}/snapshots`, { key: c.key, body: {} });
    const file = await t.request('GET', `${base}/snapshots/${snap.body.snapshot_id}/download`, {
      key: c.key,
    });
    expect(file.status).toBe(200);
    expect(file.headers['content-disposition']).toBe(
      `attachment; filename="${from.technical_name}-${snap.body.snapshot_id}.sql.gz"`,
    );
    execFileSync('psql', [into.connection_string, '-Xq', '-v', 'ON_ERROR_STOP=1'], {
      input: gunzipSync(file.raw),
    });
    const out = execFileSync('psql', [into.connection_string, '-XAtc', 'SELECT v FROM kept'], {
      encoding: 'utf8',
    });
    expect(out.trim()).toBe('downloaded');
    // Another customer's key gets 404.
    const other = await dbCustomer(t);
    const theirs = await t.request('GET', `${base}/snapshots/${snap.body.snapshot_id}/download`, {
      key: other.key,
    });
    expect(theirs.status).toBe(404);
  });

  it('psql takes the connection string as it is; the mariadb client takes the fields', async () => {
    const c = await dbCustomer(t);
    const p = await createDb(t, c, 'postgresql', 'cli');
    const out = execFileSync(
      'psql',
      [p.connection_string, '-XAtc', "SELECT current_user || '@' || current_database()"],
      {
        encoding: 'utf8',
      },
    );
    expect(out.trim()).toBe(`${p.username}@${p.technical_name}`);
    const m = await createDb(t, c, 'mariadb', 'cli');
    const row = execFileSync(
      'mariadb',
      [
        '--no-defaults',
        '-h',
        m.host,
        '-P',
        String(m.port),
        '-u',
        m.username,
        `-p${m.password}`,
        '-N',
        '-e',
        'SELECT DATABASE()',
        m.technical_name,
      ],
      { encoding: 'utf8' },
    );
    expect(row.trim()).toBe(m.technical_name);
    // The credentials view's string (no password) is refused by the server without one.
    const view = await t.request('GET', `/v1/databases/postgresql/${p.technical_name}/credentials`, {
      key: c.key,
    });
    expect(() =>
      execFileSync('psql', [view.body.connection_string, '-XAtc', 'SELECT 1'], {
        env: { ...process.env, PGPASSWORD: '' },
        stdio: 'pipe',
      }),
    ).toThrow();
  });
});

describe('encrypted tier', () => {
  it('keeps MariaDB snapshots encrypted at rest and restores them', async () => {
    const c = await dbCustomer(t);
    const d = await createDb(t, c, 'mariadb', 'vault', 'encrypted');
    const s = await connectAs('mariadb', creds(d));
    await s.query('CREATE TABLE v (secret varchar(40))');
    await s.query(`INSERT INTO v VALUES ('plain-text-marker-123')`);
    await s.end();
    const base = `/v1/databases/mariadb/${d.technical_name}`;
    const snap = await t.request('POST', `${base}/snapshots`, { key: c.key, body: {} });
    expect(snap.body).toMatchObject({ encrypted: true, format: 'sql.gz.aes-256-gcm' });
    const { blobBytes: file, writeBlob } = await snapshotObject(t, snap.body.snapshot_id);
    expect(file[0] === 0x1f && file[1] === 0x8b, 'not a plain gzip file').toBe(false);
    // The download is the plain dump, decrypted: readable with gunzip alone.
    const download = await t.request('GET', `${base}/snapshots/${snap.body.snapshot_id}/download`, {
      key: c.key,
    });
    expect(download.status).toBe(200);
    expect(download.headers['content-type']).toBe('application/gzip');
    expect(gunzipSync(download.raw).toString()).toContain('plain-text-marker-123');
    const r = await t.request('POST', `${base}/restore`, {
      key: c.key,
      body: { snapshot_id: snap.body.snapshot_id },
    });
    expect(r.status, r.text).toBe(200);
    const s2 = await connectAs('mariadb', creds(d));
    expect(await s2.query('SELECT secret FROM v')).toEqual([{ secret: 'plain-text-marker-123' }]);
    await s2.end();
    // A damaged snapshot is refused before the database is touched.
    const damaged = Buffer.from(file);
    damaged.writeUInt8(damaged.readUInt8(damaged.length - 5) ^ 0xff, damaged.length - 5);
    writeBlob(damaged);
    const bad = await t.request('POST', `${base}/restore`, {
      key: c.key,
      body: { snapshot_id: snap.body.snapshot_id },
    });
    expect(bad.status).toBe(409);
    expect(bad.body.detail.code).toBe('snapshot_unreadable');
    const s3 = await connectAs('mariadb', creds(d));
    expect(await s3.query('SELECT secret FROM v')).toEqual([{ secret: 'plain-text-marker-123' }]);
    await s3.end();
  });
});

describe('a server that does not answer', () => {
  it('reports status unknown, and refuses changes with a clear 503', async () => {
    const down = await TestFjord.create({
      FJORD_DATABASE_ENGINES: 'external',
      FJORD_POSTGRES_ADMIN_URL: 'postgres://postgres:x@127.0.0.1:9/postgres',
      FJORD_MARIADB_ADMIN_URL: 'mariadb://root:x@127.0.0.1:9/',
    });
    try {
      const c = await dbCustomer(down);
      const now = Date.now();
      await down.kernel.store
        .typed<{ databases: Record<string, unknown> }>()
        .insertInto('databases')
        .values({
          id: 'db-1',
          customer_id: c.id,
          db_type: 'postgresql',
          friendly_name: 'x',
          technical_name: `cust_${c.shortId}_pg_x`,
          username: `cust_${c.shortId}_pg_x`,
          description: null,
          tier: 'standard',
          connection_limit: 100,
          password_changed_at: now,
          created_at: now,
        })
        .execute();
      const detail = await down.request('GET', `/v1/databases/postgresql/cust_${c.shortId}_pg_x`, {
        key: c.key,
      });
      expect(detail.status).toBe(200);
      expect(detail.body).toMatchObject({ status: 'unknown', size_mb: null });
      const info = await down.request('GET', `/v1/databases/postgresql/cust_${c.shortId}_pg_x/info`, {
        key: c.key,
      });
      expect(info.body).toMatchObject({
        status: 'unknown',
        size_mb: null,
        connection_count: null,
        owner: null,
      });
      const rot = await down.request(
        'POST',
        `/v1/databases/postgresql/cust_${c.shortId}_pg_x/credentials/rotate`,
        { key: c.key },
      );
      expect(rot.status).toBe(503);
      expect(rot.body.detail.code).toBe('database_server_unavailable');
      const create = await down.request('POST', '/v1/databases', {
        key: c.key,
        body: { db_type: 'mariadb', db_name: 'y' },
      });
      expect(create.status).toBe(503);
      expect((await down.request('GET', '/v1/databases', { key: c.key })).body.total).toBe(1);
    } finally {
      await down.close();
    }
  });
});
