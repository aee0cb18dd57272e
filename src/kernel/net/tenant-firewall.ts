/**
 * The host firewall between customers' workloads (nftables, Debian's `nft`), shared by every
 * kind of workload that gets a host-side network interface of its own (a namespace server's
 * veth today; a customer's container bridge can join the same way).
 *
 * Each such interface is admitted with its customer: `tenant_of` maps the interface to a
 * 32-bit tag of the customer, `tenant_iface` holds (tag . interface) pairs. Then:
 * - forwarded traffic from a tenant interface to another tenant interface passes only when both
 *   are the same customer's; to the host's other private, link-local or loopback networks it is
 *   dropped, except DNS to the resolvers the host itself uses (`resolvers`, often on a private
 *   address in a cloud); anything else leaves by NAT (masquerade) when the host has a route;
 * - nothing from a non-tenant interface opens a connection into a tenant interface;
 * - traffic from a tenant interface to the host itself is dropped, except replies, ICMP (and
 *   IPv6 neighbour discovery), and the (protocol . port) pairs an operator publishes in the
 *   `published` set (e.g. a resolver on the gateway address).
 * One table, `inet fjord_tenants`, made once per machine and shared by every Fjord on it.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';

const exec = promisify(execFile);
export const TENANT_TABLE = 'fjord_tenants';

const RULES = `table inet ${TENANT_TABLE} {
  map tenant_of { type ifname : mark; }
  set tenant_ifaces { type ifname; }
  set tenant_iface { type mark . ifname; }
  set published { type inet_proto . inet_service; }
  set resolvers { type ipv4_addr; }
  chain forward {
    type filter hook forward priority filter - 5; policy accept;
    ct state established,related accept
    iifname @tenant_ifaces jump from_tenant
    oifname @tenant_ifaces drop
  }
  chain from_tenant {
    meta mark set iifname map @tenant_of
    oifname @tenant_ifaces meta mark . oifname @tenant_iface accept
    oifname @tenant_ifaces drop
    ip daddr @resolvers meta l4proto { tcp, udp } th dport 53 accept
    ip daddr { 0.0.0.0/8, 10.0.0.0/8, 100.64.0.0/10, 127.0.0.0/8, 169.254.0.0/16, 172.16.0.0/12, 192.168.0.0/16, 224.0.0.0/4 } drop
    ip6 daddr { ::1, fc00::/7, fe80::/10, ff00::/8 } drop
    accept
  }
  chain input {
    type filter hook input priority filter - 5; policy accept;
    iifname @tenant_ifaces jump tenant_to_host
  }
  chain tenant_to_host {
    ct state established,related accept
    meta l4proto { icmp, ipv6-icmp } accept
    meta l4proto . th dport @published accept
    drop
  }
  chain postrouting {
    type nat hook postrouting priority srcnat; policy accept;
    iifname @tenant_ifaces oifname != @tenant_ifaces masquerade
  }
}
`;

async function nft(args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('nft', args, { timeout: 30_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`nft ${args.join(' ')}: ${(stderr || err.message).trim()}`)) : resolve(stdout),
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** Whether this host can have the firewall (nft present and allowed). */
export const canFirewall = () => ['/usr/sbin/nft', '/sbin/nft'].some((p) => existsSync(p));

/** The customer's tag: a stable 32-bit number, never 0 (0 is "not a tenant"). */
export function tenantTag(customerId: string): number {
  return createHash('sha256').update(customerId).digest().readUInt32BE(0) || 1;
}

let made: Promise<void> | null = null;

/** Makes the table when the machine has none yet (a table another Fjord made is kept as it is). */
export function ensureTenantFirewall(): Promise<void> {
  made ??= (async () => {
    const present = await nft(['list', 'table', 'inet', TENANT_TABLE]).then(
      () => true,
      () => false,
    );
    if (!present) await nft(['-f', '-'], RULES);
  })().catch((err) => {
    made = null;
    throw err;
  });
  return made;
}

/** Puts a host-side interface on its customer's side of the firewall. */
export async function admitInterface(ifname: string, customerId: string): Promise<void> {
  await ensureTenantFirewall();
  const tag = `0x${tenantTag(customerId).toString(16)}`;
  await forgetInterface(ifname);
  await nft(
    ['-f', '-'],
    `add element inet ${TENANT_TABLE} tenant_ifaces { "${ifname}" }
add element inet ${TENANT_TABLE} tenant_of { "${ifname}" : ${tag} }
add element inet ${TENANT_TABLE} tenant_iface { ${tag} . "${ifname}" }
`,
  );
}

/** Takes an interface out of the firewall's sets (when its workload stops). */
export async function forgetInterface(ifname: string): Promise<void> {
  const listed = await exec('nft', ['-j', 'list', 'map', 'inet', TENANT_TABLE, 'tenant_of']).then(
    (r) => r.stdout,
    () => '',
  );
  const m = new RegExp(`\\["${ifname}",\\s*(\\d+)\\]`).exec(listed.replace(/\s+/g, ''));
  const del = (what: string) =>
    nft(['delete', 'element', 'inet', TENANT_TABLE, ...what.split(' ')]).catch(() => {});
  await del(`tenant_ifaces { "${ifname}" }`);
  await del(`tenant_of { "${ifname}" }`);
  if (m) await del(`tenant_iface { ${m[1]} . "${ifname}" }`);
}

/**
 * The host's own DNS resolvers (IPv4 `nameserver` lines of /etc/resolv.conf, loopback ones
 * left out: a server cannot reach the host's loopback), let through to port 53 so that a
 * server's copy of the host's resolv.conf works from inside.
 */
export async function allowHostResolvers(resolvConf = '/etc/resolv.conf'): Promise<string[]> {
  await ensureTenantFirewall();
  const text = await readFile(resolvConf, 'utf8').catch(() => '');
  const found = [...text.matchAll(/^\s*nameserver\s+(\d+\.\d+\.\d+\.\d+)\s*$/gm)]
    .map((m) => m[1]!)
    .filter((a) => !a.startsWith('127.'));
  if (found.length)
    await nft(['-f', '-'], `add element inet ${TENANT_TABLE} resolvers { ${found.join(', ')} }\n`);
  return found;
}
