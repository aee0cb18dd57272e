/**
 * Running the podman command line: the flags every call needs here, output as text, and the
 * containers this install owns. Apart from podman.ts so the driver, the image loader and the
 * stats/logs readers share one way of calling podman.
 */
import { type ChildProcessByStdio, execFile, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';

/**
 * Flags podman needs on hosts like ours: crun fails there, root lacks CAP_SYS_RESOURCE (rlimits
 * must be given explicitly) and cgroups are hybrid v1, so the systemd cgroup manager is out.
 */
const GLOBAL = ['--runtime', 'runc', '--cgroup-manager', 'cgroupfs', '--events-backend', 'file'];
export const ULIMITS = ['--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=4096:4096'];

export class PodmanCli {
  constructor(
    readonly podman: string,
    private readonly owner: string,
  ) {}

  async hostPort(container: string, port: number): Promise<number | null> {
    const out = await this.run(['port', container, `${port}/tcp`]).catch(() => '');
    const m = /:(\d+)\s*$/m.exec(out.trim());
    return m ? Number(m[1]) : null;
  }

  async ours(filter?: string) {
    const args = ['ps', '-a', '--format', 'json', '--filter', `label=fjord.owner=${this.owner}`];
    if (filter) args.push('--filter', `label=${filter}`);
    const out = await this.run(args).catch(() => '[]');
    const list = JSON.parse(out.trim() || '[]') as {
      Id: string;
      Names: string[] | null;
      State: string;
      Labels: Record<string, string> | null;
    }[];
    return list.map((c) => ({
      id: c.Id,
      name: c.Names?.[0] ?? c.Id,
      running: c.State === 'running',
      labels: c.Labels ?? {},
    }));
  }

  /** A long-running podman command (`logs --follow`), its output as streams; the caller ends it. */
  spawn(args: string[]): ChildProcessByStdio<null, Readable, Readable> {
    return spawn(this.podman, [...GLOBAL, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  }

  runBoth(args: string[]): Promise<{ stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      execFile(
        this.podman,
        [...GLOBAL, ...args],
        { timeout: 30_000, maxBuffer: 16 * 1024 * 1024 },
        (err, stdout, stderr) => {
          if (err) reject(err);
          else resolve({ stdout: String(stdout), stderr: String(stderr) });
        },
      );
    });
  }

  run(args: string[], timeout = 60_000): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        this.podman,
        [...GLOBAL, ...args],
        { timeout, maxBuffer: 16 * 1024 * 1024 },
        (err, stdout, stderr) => {
          if (err) reject(new Error(`podman ${args[0]}: ${String(stderr).trim() || err.message}`));
          else resolve(String(stdout));
        },
      );
    });
  }
}

export const lastLine = (text: string) => text.trim().split('\n').pop() ?? text;
