/**
 * One podman network per customer: a bridge of its own, made when the customer's first container
 * starts and removed with their last. Networks are made with podman's `isolate` option, which
 * drops traffic between isolated bridges, so one customer's containers cannot reach another's
 * (tested in test/e2e/apps-isolation.test.ts); the ingress reaches every container through its
 * port published on the host's loopback, which isolation leaves alone.
 */
import { createHash } from 'node:crypto';
import { KeyedMutex } from '../../../kernel/keyed-mutex.js';
import type { PodmanCli } from './podman-cli.js';

export class PodmanNetworks {
  /** Creation and removal of one customer's network never overlap in this process. */
  private readonly mutex = new KeyedMutex();

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
      return start(name);
    });
  }

  /** Removes the customer's network once none of their containers is left on it. */
  async releaseIfUnused(customerId: string): Promise<void> {
    const name = this.nameOf(customerId);
    await this.mutex.run(name, async () => {
      const users = await this.cli.run(['ps', '-a', '-q', '--filter', `network=${name}`]).catch(() => 'x');
      if (users.trim() === '') await this.cli.run(['network', 'rm', name]).catch(() => undefined);
    });
  }
}
