/**
 * A key for one console terminal connection, put into and taken out of a running server's
 * `/root/.ssh/authorized_keys`. The work is done by a shell *inside* the server — in its user,
 * mount and PID namespaces, as its root (an unprivileged id on the host), under the servers'
 * seccomp filter — never by the host writing into the server's disk: the customer owns that tree,
 * and a symbolic link there (`/root/.ssh → /etc` of the host) would turn a host write into an
 * escape. Inside, every path resolves in the server's own root.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { SECCOMP_FILE } from './launch.js';
import { LAUNCH_HELPER, PYTHON } from './launch-helper.js';

/** The comment of every terminal key line, followed by the connection's own random part. */
export const TERMINAL_KEY_PREFIX = 'fjord-terminal-';

const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Appends the key line; makes `/root/.ssh` if the customer removed it. */
const ADD = `umask 077; mkdir -p /root/.ssh && printf '%s\\n' "$1" >> /root/.ssh/authorized_keys`;
/** Drops every line carrying the connection's marker, keeping the file's owner and mode. */
const REMOVE = `f=/root/.ssh/authorized_keys; [ -f "$f" ] || exit 0
grep -vF -- "$1" "$f" > "$f.fjord-tmp" || true
cat "$f.fjord-tmp" > "$f"; rm -f "$f.fjord-tmp"`;

/** Runs `script` with `arg` as `$1` inside the server whose PID 1 (on the host) is `init`. */
function inServer(init: number, script: string, arg: string): Promise<void> {
  const enter = [
    'nsenter',
    `--target=${init}`,
    '--user',
    '--mount',
    '--pid',
    '--uts',
    '--ipc',
    '--cgroup',
    '--net',
    '--root',
    '--wd',
    '-S',
    '0',
    '-G',
    '0',
    '--',
    '/bin/sh',
    '-c',
    script,
    'fjord-terminal',
    arg,
  ];
  // The same filter as every process of the server: nothing runs in it with more than they have.
  const [cmd, ...args] = existsSync(SECCOMP_FILE)
    ? [PYTHON, '-c', LAUNCH_HELPER, 'seccomp', SECCOMP_FILE, ...enter]
    : enter;
  return new Promise((resolve, reject) => {
    execFile(cmd!, args, { timeout: 10_000, env: { PATH } }, (err, _out, stderr) =>
      err ? reject(new Error(`in server: ${String(stderr).trim() || err.message}`)) : resolve(),
    );
  });
}

/** `publicKey` (an OpenSSH line) added with `marker` as its comment, so exactly it is removed later. */
export async function addLoginKey(init: number, publicKey: string, marker: string): Promise<void> {
  const [type, body] = publicKey.trim().split(/\s+/);
  if (!type || !body || !/^[A-Za-z0-9+/=]+$/.test(body) || !/^[a-z0-9@.-]+$/.test(type))
    throw new Error('not an OpenSSH public key line');
  await inServer(init, ADD, `${type} ${body} ${marker}`);
}

export function removeLoginKey(init: number, marker: string): Promise<void> {
  return inServer(init, REMOVE, marker);
}
