import { describe, expect, it, vi } from 'vitest';
import type { PodmanCli } from './podman-cli.js';
import { PodmanNetworks } from './podman-network.js';

// The host's firewall is not this test's subject: its sets are recorded, not changed.
const admitted: string[] = [];
vi.mock('../../../kernel/net/tenant-firewall.js', () => ({
  canFirewall: () => true,
  admitInterface: async (bridge: string) => void admitted.push(bridge),
  forgetInterface: async () => {},
}));

/** A podman that keeps networks in a set and records each call's first two words. */
function fakePodman() {
  const networks = new Set<string>();
  const calls: string[] = [];
  const cli = {
    async run(args: string[]) {
      calls.push(args.slice(0, 2).join(' '));
      const name = args.at(-1)!;
      if (args[1] === 'exists' && !networks.has(name)) throw new Error('podman network: no such network');
      if (args[1] === 'create') networks.add(name);
      if (args[1] === 'inspect') return networks.has(name) ? 'cni-podman7\n' : '';
      if (args[1] === 'rm') networks.delete(name);
      return '';
    },
  };
  return { cli: cli as unknown as PodmanCli, networks, calls };
}

describe('customer networks of the podman driver', () => {
  it('asks podman about a network once, and makes it again when it was removed behind Fjord’s back', async () => {
    const podman = fakePodman();
    const nets = new PodmanNetworks(podman.cli, 'owner-1');
    const name = nets.nameOf('customer-a');
    const root = process.getuid?.() === 0;

    await nets.withNetwork('customer-a', async (n) => expect(n).toBe(name));
    expect(podman.calls).toEqual(['network exists', 'network create', ...(root ? ['network inspect'] : [])]);

    // The second start skips podman's network commands; the firewall is still told every time.
    podman.calls.length = 0;
    await nets.withNetwork('customer-a', async () => 'started');
    expect(podman.calls).toEqual([]);
    if (root) expect(admitted).toEqual(['cni-podman7', 'cni-podman7']);

    // An operator removes it: the start that fails on it makes it again and starts once more.
    podman.networks.delete(name);
    let attempts = 0;
    const started = await nets.withNetwork('customer-a', async (n) => {
      attempts++;
      if (!podman.networks.has(n)) throw new Error(`podman run: network ${n} not found`);
      return 'started';
    });
    expect(started).toBe('started');
    expect(attempts).toBe(2);
    expect(podman.networks.has(name)).toBe(true);

    // A failure that is not the network's is the caller's: thrown, and the network checked again next time.
    podman.calls.length = 0;
    await expect(
      nets.withNetwork('customer-a', async () => {
        throw new Error('podman run: image not known');
      }),
    ).rejects.toThrow('image not known');
    await nets.withNetwork('customer-a', async () => 'started');
    expect(podman.calls[0]).toBe('network exists');
  });

  it('forgets a network it removes', async () => {
    const podman = fakePodman();
    const nets = new PodmanNetworks(podman.cli, 'owner-1');
    await nets.withNetwork('customer-b', async () => 'started');
    await nets.releaseIfUnused('customer-b');
    expect(podman.networks.size).toBe(0);
    podman.calls.length = 0;
    await nets.withNetwork('customer-b', async () => 'started');
    expect(podman.calls.slice(0, 2)).toEqual(['network exists', 'network create']);
  });
});
