import { CliError } from '../context.js';
import type { Action } from './action.js';
import { takeFlag } from './action.js';
import { runAttached } from './spawn-client.js';

/** `fjord vps ssh <vps_id>`: ssh to the server's address as root (or `--user`), with your own keys. */
export const vpsSsh: Action = {
  words: ['vps', 'ssh'],
  args: ['vps_id'],
  op: 'vpsGet',
  help: `Runs ssh to the server's IPv4 address (IPv6 when it has none) as root, or --user NAME.
Words after -- are a command to run there: fjord vps ssh web1 -- uptime. ssh reads its
options (a jump host, a key) from ~/.ssh/config as usual.`,
  async run(a, [id, ...rest]) {
    if (!id || rest.length) throw new CliError('usage: fjord vps ssh <vps_id> [--user NAME] [-- command]', 2);
    const user = takeFlag(a, 'user') ?? 'root';
    const vps = (await a.call('vpsGet', { positional: [id] })) as {
      status: string;
      ipv4_address: string | null;
      ipv6_address: string | null;
    };
    const address = vps.ipv4_address ?? vps.ipv6_address;
    if (!address) throw new CliError(`server ${id} has no address yet (status ${vps.status})`);
    if (vps.status !== 'running') a.err(`fjord: server ${id} is ${vps.status}\n`);
    return await runAttached('ssh', [`${user}@${address}`, ...a.passthrough]);
  },
};
