import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { installDataDir } from './data-dir-install.js';
import {
  freePort,
  isExecutable,
  isRoot,
  portInUse,
  postgresAccount,
  runAsPostgres,
  sleep,
  tailOf,
} from './process.js';

export const POSTGRES_BIN_DIRS = [
  '/usr/lib/postgresql/17/bin',
  '/usr/lib/postgresql/16/bin',
  '/usr/lib/postgresql/15/bin',
];

export function findPostgresBinDir(): string | null {
  return (
    POSTGRES_BIN_DIRS.find((d) => isExecutable(join(d, 'initdb')) && isExecutable(join(d, 'pg_ctl'))) ?? null
  );
}

export interface EmbeddedEngineOptions {
  /** Directory the engine owns (created when missing). */
  dir: string;
  /** Address it listens on for customers. */
  host: string;
  /** Trade durability for speed (test servers only). */
  fast?: boolean;
  log?: (msg: string) => void;
}

/** What a driver needs to reach an embedded or external server. */
export interface EngineEndpoint {
  /** Admin connection URL (may carry a `host=` socket directory or a `socket=` path). */
  adminUrl: string;
  /** The pg_hba.conf Fjord manages for firewall rules, when it manages one. */
  hbaFile: string | null;
}

/**
 * Fjord's own PostgreSQL: `initdb` once in the data dir, then `pg_ctl start` on a loopback port
 * (the same port as last time when it is free, so connection strings survive a restart).
 * PostgreSQL refuses root, so the server runs as Debian's `postgres` user. The admin connects
 * over the Unix socket inside the data directory with `trust` (only root and postgres can
 * reach it); customers connect over TCP with SCRAM passwords, per the managed pg_hba.conf.
 */
export class EmbeddedPostgres {
  /** Whether a server of `dir` may still run: PostgreSQL removes postmaster.pid when it stops. */
  static mayBeRunning(dir: string): boolean {
    return existsSync(join(dir, 'data', 'postmaster.pid'));
  }

  readonly dataDir: string;
  private readonly stateFile: string;
  private port = 0;
  private running = false;
  private watchdog: NodeJS.Timeout | null = null;
  private readonly exitHook = () => this.stopSync();

  constructor(
    private readonly binDir: string,
    private readonly opts: EmbeddedEngineOptions,
  ) {
    this.dataDir = join(opts.dir, 'data');
    this.stateFile = join(opts.dir, 'state.json');
  }

  get hbaFile(): string {
    return join(this.dataDir, 'pg_hba.conf');
  }

  endpoint(): EngineEndpoint {
    return {
      adminUrl: `postgres://postgres@${this.opts.host}:${this.port}/postgres?host=${encodeURIComponent(this.dataDir)}`,
      hbaFile: this.hbaFile,
    };
  }

  async start(): Promise<EngineEndpoint> {
    const log = this.opts.log ?? (() => {});
    mkdirSync(this.opts.dir, { recursive: true });
    const account = isRoot() ? postgresAccount() : null;
    if (isRoot() && !account) throw new Error('running as root but there is no `postgres` user');
    if (account) makeTraversable(this.opts.dir);
    await installDataDir(
      this.dataDir,
      'PG_VERSION',
      async (dir) => {
        if (account) chownSync(dir, account.uid, account.gid);
        log(`initdb ${this.dataDir}`);
        const init = await runAsPostgres(
          join(this.binDir, 'initdb'),
          [
            '-D',
            dir,
            '-U',
            'postgres',
            '--auth-local=trust',
            '--auth-host=scram-sha-256',
            '-E',
            'UTF8',
            '--locale=C.UTF-8',
            ...(this.opts.fast ? ['--no-sync'] : []),
          ],
          dir,
        );
        if (init.code !== 0) throw new Error(`initdb failed: ${tailOf(init.output)}`);
      },
      log,
    );
    // A server left behind by a Fjord that died: stop it, then start on our terms.
    await runAsPostgres(
      join(this.binDir, 'pg_ctl'),
      ['-D', this.dataDir, '-m', 'fast', 'stop'],
      this.dataDir,
      60_000,
    );
    const previous = this.readState().port;
    for (let attempt = 0; attempt < 4; attempt++) {
      this.port =
        attempt === 0 && previous && !(await portInUse(this.opts.host, previous))
          ? previous
          : await freePort(this.opts.host);
      const options = [
        `-p ${this.port}`,
        `-k '${this.dataDir}'`,
        `-c listen_addresses='${this.opts.host}'`,
        '-c max_connections=300',
        '-c password_encryption=scram-sha-256',
        ...(this.opts.fast ? ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off'] : []),
      ].join(' ');
      const r = await runAsPostgres(
        join(this.binDir, 'pg_ctl'),
        [
          '-D',
          this.dataDir,
          '-w',
          '-t',
          '60',
          '-o',
          options,
          '-l',
          join(this.dataDir, 'server.log'),
          'start',
        ],
        this.dataDir,
        90_000,
      );
      if (r.code === 0) break;
      const serverLog = this.serverLogTail();
      if (attempt < 3 && /could not bind|already in use/i.test(serverLog)) continue;
      throw new Error(`pg_ctl start failed: ${tailOf(r.output)}\n${serverLog}`);
    }
    this.running = true;
    writeFileSync(this.stateFile, JSON.stringify({ port: this.port }));
    process.removeListener('exit', this.exitHook);
    process.on('exit', this.exitHook);
    if (!this.watchdog) this.superviseEvery(5000);
    log(`PostgreSQL listening on ${this.opts.host}:${this.port}`);
    return this.endpoint();
  }

  /** Restarts the server if its postmaster went away (killed, crashed) while we still want it. */
  private superviseEvery(ms: number) {
    let restarting = false;
    this.watchdog = setInterval(() => {
      // `watchdog` is cleared by stop(): while it is set, we want the server up.
      if (restarting || this.postmasterAlive()) return;
      this.opts.log?.('embedded PostgreSQL died; restarting it');
      restarting = true;
      this.running = false;
      this.start()
        .catch((err) => this.opts.log?.(`restart failed: ${(err as Error).message}`))
        .finally(() => {
          restarting = false;
        });
    }, ms);
    this.watchdog.unref();
  }

  private postmasterAlive(): boolean {
    try {
      const pid = Number(readFileSync(join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }

  async stop(): Promise<void> {
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
    process.removeListener('exit', this.exitHook);
    if (!this.running) return;
    this.running = false;
    await runAsPostgres(
      join(this.binDir, 'pg_ctl'),
      ['-D', this.dataDir, '-m', 'fast', '-w', 'stop'],
      this.dataDir,
      60_000,
    );
    await sleep(0);
  }

  private stopSync() {
    if (!this.running) return;
    this.running = false;
    const args = ['-D', this.dataDir, '-m', 'immediate', 'stop'];
    if (isRoot())
      spawnSync('runuser', ['-u', 'postgres', '--', join(this.binDir, 'pg_ctl'), ...args], {
        stdio: 'ignore',
      });
    else spawnSync(join(this.binDir, 'pg_ctl'), args, { stdio: 'ignore' });
  }

  private readState(): { port?: number } {
    try {
      return JSON.parse(readFileSync(this.stateFile, 'utf8')) as { port?: number };
    } catch {
      return {};
    }
  }

  private serverLogTail(): string {
    try {
      return tailOf(readFileSync(join(this.dataDir, 'server.log'), 'utf8'));
    } catch {
      return '';
    }
  }
}

/** The postgres user must be able to walk down to its data directory (never list or read ours). */
function makeTraversable(dir: string) {
  let d = dir;
  for (let i = 0; i < 8 && d !== dirname(d); i++, d = dirname(d)) {
    try {
      const mode = statSync(d).mode;
      if ((mode & 0o001) === 0) chmodSync(d, (mode & 0o7777) | 0o001);
    } catch {
      return;
    }
  }
}
