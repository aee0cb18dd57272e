// The bench's Fjord DNS child: the authoritative server of src/areas/dns/server with the zones of
// a JSON file (ZoneSnapshot[], keys base64) as its ZoneSource, on a free port; prints the port.
import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { createDnsServer } from '../src/areas/dns/server/index.js';
import type { ZoneSnapshot, ZoneSource } from '../src/areas/dns/server-contract.js';
import { loadConfig } from '../src/config/config.js';
import type { Kernel } from '../src/kernel/kernel.js';
import { Registry } from '../src/kernel/registry.js';

type Stored = Omit<ZoneSnapshot, 'signingKey'> & {
  signingKey:
    | (Omit<NonNullable<ZoneSnapshot['signingKey']>, 'publicKey' | 'privateKeyPkcs8'> & {
        publicKey: string;
        privateKeyPkcs8: string;
      })
    | null;
};

const zones: ZoneSnapshot[] = (JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Stored[]).map((z) => ({
  ...z,
  signingKey: z.signingKey && {
    ...z.signingKey,
    publicKey: Buffer.from(z.signingKey.publicKey, 'base64'),
    privateKeyPkcs8: Buffer.from(z.signingKey.privateKeyPkcs8, 'base64'),
  },
}));
const source: ZoneSource = {
  loadTsigKeys: async () => [],
  loadAll: async () => zones,
  loadZone: async (apex) => zones.find((z) => z.apex === apex) ?? null,
  onZoneChanged: () => () => {},
};
// RRL off: the load comes from one address and would otherwise be rate limited by design.
const kernel = {
  config: loadConfig({ FJORD_DNS_PORT: '0', FJORD_DNS_RRL_RATE: '0' }),
  log: pino({ level: 'warn' }),
  clock: { now: () => new Date() },
  registry: new Registry(),
} as unknown as Kernel;
let queries = 0;
const [server] = createDnsServer(kernel, source, {
  recordQueries: async (batch) => {
    for (const row of batch) queries += row.count;
  },
});
await server!.start();
process.stdout.write(`listening ${(server as unknown as { port(): number }).port()}\n`);
process.once('SIGTERM', () => {
  void server!.stop().then(() => {
    process.stderr.write(`queries counted: ${queries}\n`);
    process.exit(0);
  });
});
