import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lazyPackage } from '../../../kernel/lazy.js';

const mariadb = lazyPackage<typeof import('mariadb')>('mariadb');

import { stopOrphan } from '../../../kernel/supervision/orphans.js';
import { installDataDir } from './data-dir-install.js';
import type { EmbeddedEngineOptions, EngineEndpoint } from './embedded-postgres.js';
import { freePort, isExecutable, isRoot, portInUse, run, sleep, tailOf } from './process.js';

export const MARIADBD = '/usr/sbin/mariadbd';
export const MARIADB_INSTALL_DB = '/usr/bin/mariadb-install-db';

export const hasMariadbBinaries = () => isExecutable(MARIADBD) && isExecutable(MARIADB_INSTALL_DB);

/**
 * Fjord's own MariaDB: `mariadb-install-db` once, then `mariadbd` as a child process on a
 * loopback port, restarted if it dies. The admin is root over the Unix socket (unix_socket
 * authentication: only root on this machine gets in). InnoDB data-at-rest encryption is on
 * (file_key_management with a key file only root can read), which is what the `encrypted`
 * tier relies on. `--skip-name-resolve` keeps host patterns to addresses, which the firewall
 * rules are.
 */
export class EmbeddedMariadb {
  /** Whether a server of `dir` may still run: mariadbd removes its pid file when it stops. */
  static mayBeRunning(dir: string): boolean {
    return existsSync(join(dir, 'mariadbd.pid'));
  }

  readonly dataDir: string;
  readonly socket: string;
  private readonly stateFile: string;
  private readonly keyFile: string;
  private readonly pidFile: string;
  private child: ChildProcess | null = null;
  private port = 0;
  private wanted = false;
  private output = '';
  private readonly exitHook = () => this.child?.kill('SIGKILL');

  constructor(private readonly opts: EmbeddedEngineOptions) {
    this.dataDir = join(opts.dir, 'data');
    this.socket = join(opts.dir, 'mariadb.sock');
    this.stateFile = join(opts.dir, 'state.json');
    this.keyFile = join(opts.dir, 'encryption.key');
    this.pidFile = join(opts.dir, 'mariadbd.pid');
  }

  endpoint(): EngineEndpoint {
    return {
      adminUrl: `mariadb://root@${this.opts.host}:${this.port}/?socket=${encodeURIComponent(this.socket)}`,
      hbaFile: null,
    };
  }

  async start(): Promise<EngineEndpoint> {
    const log = this.opts.log ?? (() => {});
    mkdirSync(this.opts.dir, { recursive: true, mode: 0o700 });
    if (!existsSync(this.keyFile)) {
      writeFileSync(this.keyFile, `1;${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
    }
    await installDataDir(
      this.dataDir,
      'mysql',
      async (dir) => {
        log(`mariadb-install-db ${this.dataDir}`);
        const init = await run(MARIADB_INSTALL_DB, [
          '--no-defaults',
          `--datadir=${dir}`,
          ...(isRoot() ? ['--user=root'] : []),
          '--auth-root-authentication-method=socket',
          '--skip-test-db',
        ]);
        if (init.code !== 0) throw new Error(`mariadb-install-db failed: ${tailOf(init.output)}`);
      },
      log,
    );
    // A mariadbd left running by a Fjord that was killed holds the data dir, the socket and its
    // port: a second one could never start, and readiness checks would reach the orphan.
    await stopOrphan({
      pidFile: this.pidFile,
      cmdline: ['mariadbd', `--datadir=${this.dataDir}`],
      log: (m) => log(m),
    });
    this.wanted = true;
    const previous = this.readState().port;
    for (let attempt = 0; ; attempt++) {
      this.port =
        attempt === 0 && previous && !(await portInUse(this.opts.host, previous))
          ? previous
          : await freePort(this.opts.host);
      try {
        await this.spawnServer();
        break;
      } catch (err) {
        if (attempt >= 3 || !/already in use|bind/i.test(this.output)) throw err;
      }
    }
    writeFileSync(this.stateFile, JSON.stringify({ port: this.port }));
    process.removeListener('exit', this.exitHook);
    process.on('exit', this.exitHook);
    log(`MariaDB listening on ${this.opts.host}:${this.port}`);
    return this.endpoint();
  }

  private async spawnServer(): Promise<void> {
    this.output = '';
    const args = [
      '--no-defaults',
      `--datadir=${this.dataDir}`,
      ...(isRoot() ? ['--user=root'] : []),
      `--port=${this.port}`,
      `--bind-address=${this.opts.host}`,
      `--socket=${this.socket}`,
      `--pid-file=${this.pidFile}`,
      '--skip-name-resolve',
      '--userstat=1',
      '--max-connections=1100',
      '--innodb-buffer-pool-size=64M',
      '--plugin-load-add=file_key_management',
      `--file-key-management-filename=${this.keyFile}`,
      '--innodb-encrypt-tables=ON',
      '--innodb-encrypt-log=ON',
      ...(this.opts.fast ? ['--innodb-flush-log-at-trx-commit=0', '--sync-binlog=0'] : []),
    ];
    const child = spawn(MARIADBD, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const keep = (d: Buffer) => {
      this.output = tailOf(this.output + d.toString(), 60);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    let exited = false;
    child.once('exit', (code, signal) => {
      exited = true;
      if (this.child === child) this.child = null;
      if (!this.wanted) return;
      this.opts.log?.(`embedded MariaDB exited (${code ?? signal}); restarting it`);
      // Supervision: a server that dies while we want it is started again on the same port.
      setTimeout(() => {
        if (this.wanted && !this.child) void this.spawnServer().catch((e) => this.opts.log?.(String(e)));
      }, 500).unref();
    });
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (exited) throw new Error(`mariadbd exited during start: ${this.output}`);
      try {
        const c = await mariadb().createConnection({
          socketPath: this.socket,
          user: 'root',
          connectTimeout: 1000,
        });
        // Ready only when the server behind the socket is this child on this port: no port is
        // reported before something listens on it.
        const [row] = (await c.query('SELECT @@port AS port, @@pid_file AS pidFile')) as { port: number }[];
        await c.end();
        if (Number(row?.port) === this.port) return;
        throw new Error('another server answers on the socket');
      } catch {
        if (Date.now() > deadline) {
          child.kill('SIGKILL');
          throw new Error(`mariadbd did not come up: ${this.output}`);
        }
        await sleep(100);
      }
    }
  }

  async stop(): Promise<void> {
    this.wanted = false;
    process.removeListener('exit', this.exitHook);
    const child = this.child;
    if (!child) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
    this.child = null;
  }

  private readState(): { port?: number } {
    try {
      return JSON.parse(readFileSync(this.stateFile, 'utf8')) as { port?: number };
    } catch {
      return {};
    }
  }
}
