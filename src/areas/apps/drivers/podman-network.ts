/**
 * One podman network per customer: a bridge of its own, made when the customer's first container
 * starts and removed with their last. Networks are made with podman's `isolate` option, which
 * drops traffic between isolated bridges, and the bridge joins the host's tenant firewall
 * (kernel/net/tenant-firewall.ts) as the customer's, the same firewall as the customer's virtual
 * servers: a container reaches its own customer's containers and servers, never another
 * customer's, and never a service of the host itself (loopback, or any host address, however the
 * service is bound). The ingress reaches every container through its port published on the
 * host's loopback: traffic the host starts, which the firewall leaves alone. Tested in
 * test/e2e/apps-isolation.test.ts.
 */
import { createHash } from 'node:crypto';
import { KeyedMutex } from '../../../kernel/keyed-mutex.js';
import { admitInterface, canFirewall, forgetInterface } from '../../../kernel/net/tenant-firewall.js';
import type { PodmanCli } from './podman-cli.js';

export class PodmanNetworks {
  /** Creation and removal of one customer's network never overlap in this process. */
  private readonly mutex = new KeyedMutex();
  /**
   * Networks this process made or found, with their bridge (null where Fjord does not run as
   * root): a container start skips `podman network exists` and `inspect`, about 0.35 s of CPU each,
   * a third of a cold start. Forgotten when the network is removed or a start on it fails.
   */
  private readonly known = new Map<string, string | null>();

  constructor(
    private readonly cli: PodmanCli,
    private readonly owner: string,
  ) {}

  /** The network name of a customer's containers (short, and free of the customer's id). */
  nameOf(customerId: string): string {
    const tag = createHash('sha256').update(`${this.owner}:${customerId}`).digest('hex').slice(0, 16);
    return `fjord-${tag}`;
  }

  /** Runs `start` with the customer's network present (made first when it is missing). */
  async withNetwork<T>(customerId: string, start: (network: string) => Promise<T>): Promise<T> {
    const name = this.nameOf(customerId);
    return this.mutex.run(name, async () => {
      const attempt = async () => {
        await this.admit(name, await this.ensure(name), customerId);
        return start(name);
      };
      const remembered = this.known.has(name);
      try {
        return await attempt();
      } catch (err) {
        this.known.delete(name);
        // A network removed behind this process's back (an operator's prune): made again, once.
        if (!remembered || !/network/i.test(String(err))) throw err;
        return attempt();
      }
    });
  }

  /** Makes the network when it is missing; its bridge (root only), remembered. */
  private async ensure(name: string): Promise<string | null> {
    const known = this.known.get(name);
    if (known !== undefined) return known;
    const exists = await this.cli.run(['network', 'exists', name]).then(
      () => true,
      () => false,
    );
    if (!exists)
      await this.cli.run([
        'network',
        'create',
        '--opt',
        'isolate=true',
        '--label',
        `fjord.owner=${this.owner}`,
        '--label',
        'fjord.network=customer',
        name,
      ]);
    const bridge = process.getuid?.() === 0 ? await this.bridgeOf(name) : null;
    this.known.set(name, bridge);
    return bridge;
  }

  /** Removes the customer's network once none of their containers is left on it. */
  async releaseIfUnused(customerId: string): Promise<void> {
    const name = this.nameOf(customerId);
    await this.mutex.run(name, async () => {
      const users = await this.cli.run(['ps', '-a', '-q', '--filter', `network=${name}`]).catch(() => 'x');
      if (users.trim() !== '') return;
      const bridge = await this.bridgeOf(name);
      this.known.delete(name);
      await this.cli.run(['network', 'rm', name]).catch(() => undefined);
      if (bridge && process.getuid?.() === 0 && canFirewall()) await forgetInterface(bridge);
    });
  }

  /** The host-side bridge of a network (podman names it, e.g. `cni-podman3`), or null. */
  private async bridgeOf(name: string): Promise<string | null> {
    const out = await this.cli
      .run(['network', 'inspect', '--format', '{{.NetworkInterface}}', name])
      .catch(() => '');
    return out.trim() || null;
  }

  /**
   * Puts the network's bridge on its customer's side of the tenant firewall (again at each start:
   * the sets do not outlive a reboot, and a bridge name podman reuses must get its new owner).
   * A host without nftables cannot hold containers off its own services: that is refused.
   * Rootless podman (Fjord not run as root) keeps its bridges in a network namespace of its own,
   * off the host's interfaces, where the host firewall has nothing to hold.
   */
  private async admit(name: string, bridge: string | null, customerId: string): Promise<void> {
    if (process.getuid?.() !== 0) return;
    if (!canFirewall())
      throw new Error('the podman driver needs nftables (Debian: nftables) to keep containers off the host');
    if (!bridge) throw new Error(`podman network ${name} has no bridge interface`);
    await admitInterface(bridge, customerId);
  }
}
