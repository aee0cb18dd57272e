// Authoritative DNS throughput: Fjord's server against NSD serving the same zones, both as child
// processes of this run, loaded by dnsperf in interleaved rounds.
//
//   npm run bench:dns [-- --duration 5 --rounds 3 --clients 4 --nsd-servers 1]
//
// Two zones: `bench.test` unsigned, queried without DO; `signed.test`, queried with DO — Fjord
// signs it online (ECDSA P-256, compact NSEC), NSD serves it presigned by ldns-signzone (NSEC).
// Prints queries per second, mean latency, server CPU time per query, and Fjord's ratio to NSD
// in each round. See bench/README.md.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { keyTag } from '../src/areas/dns/server/rdata.js';
import type { ServedRecord, ZoneSnapshot } from '../src/areas/dns/server-contract.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    clients: { type: 'string', default: '4' },
    'nsd-servers': { type: 'string', default: '1' },
    // Pin the servers to CPU 0 and dnsperf to CPU 1 (taskset), so that they do not share a core.
    pin: { type: 'boolean', default: false },
  },
});
const DURATION = Number(args.duration);

/** The command, under `taskset -c cpu` with --pin (taskset execs it: the pid stays the server's). */
function pinned(cpu: string, cmd: string, argv: string[]): [string, string[]] {
  return args.pin ? ['taskset', ['-c', cpu, cmd, ...argv]] : [cmd, argv];
}
const ROUNDS = Math.max(1, Number(args.rounds));
const TARGET_RATIO = 0.5;
const HOSTS = 1000;

const dir = mkdtempSync(join(tmpdir(), 'fjord-dns-bench-'));
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function zone(apex: string, signed: boolean): ZoneSnapshot {
  const records: ServedRecord[] = [];
  const r = (name: string, data: ServedRecord['data']) => records.push({ name, ttl: 300, data });
  r(apex, { type: 'A', address: '192.0.2.1' });
  r(apex, { type: 'MX', preference: 10, exchange: `mail.${apex}` });
  r(apex, { type: 'TXT', strings: ['v=spf1 -all'] });
  r(`mail.${apex}`, { type: 'A', address: '192.0.2.25' });
  r(`ns1.${apex}`, { type: 'A', address: '192.0.2.2' });
  r(`ns2.${apex}`, { type: 'A', address: '192.0.2.3' });
  r(`*.wild.${apex}`, { type: 'A', address: '192.0.2.50' });
  for (let i = 0; i < HOSTS; i++) {
    r(`h${i}.${apex}`, { type: 'A', address: `10.${(i >> 8) & 255}.${i & 255}.1` });
    r(`h${i}.${apex}`, { type: 'AAAA', address: `2001:db8::${i.toString(16)}` });
  }
  let signingKey: ZoneSnapshot['signingKey'] = null;
  if (signed) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const jwk = publicKey.export({ format: 'jwk' });
    const raw = Buffer.concat([Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
    signingKey = {
      algorithm: 13,
      flags: 257,
      keyTag: keyTag(Buffer.concat([Buffer.from([1, 1, 3, 13]), raw])),
      publicKey: raw,
      privateKeyPkcs8: privateKey.export({ format: 'der', type: 'pkcs8' }),
    };
  }
  return {
    zoneId: `zone_${apex}`,
    customerId: 'cus_bench',
    apex,
    status: 'active',
    nameservers: [`ns1.${apex}`, `ns2.${apex}`],
    soa: {
      mname: `ns1.${apex}`,
      rname: `hostmaster.${apex}`,
      serial: 1,
      refresh: 7200,
      retry: 3600,
      expire: 1209600,
      minimum: 60,
      ttl: 3600,
    },
    records,
    signingKey,
  };
}

function zoneFile(z: ZoneSnapshot): string {
  const s = z.soa;
  const lines = [
    `$ORIGIN ${z.apex}.`,
    `@ ${s.ttl} IN SOA ${s.mname}. ${s.rname}. ${s.serial} ${s.refresh} ${s.retry} ${s.expire} ${s.minimum}`,
    ...z.nameservers.map((ns) => `@ ${s.ttl} IN NS ${ns}.`),
  ];
  for (const rec of z.records) {
    const d = rec.data;
    const data =
      d.type === 'MX'
        ? `${d.preference} ${d.exchange}.`
        : d.type === 'TXT'
          ? d.strings.map((x) => JSON.stringify(x)).join(' ')
          : 'address' in d
            ? d.address
            : '';
    lines.push(`${rec.name}. ${rec.ttl} IN ${d.type} ${data}`);
  }
  return `${lines.join('\n')}\n`;
}

/** dnsperf's query file: mostly positive answers, some NXDOMAIN and wildcard names. */
function queries(apex: string): string {
  const out: string[] = [];
  let seed = 1;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let i = 0; i < 10_000; i++) {
    const p = rnd(100);
    if (p < 60) out.push(`h${rnd(HOSTS)}.${apex} A`);
    else if (p < 70) out.push(`h${rnd(HOSTS)}.${apex} AAAA`);
    else if (p < 75) out.push(`${apex} MX`);
    else if (p < 80) out.push(`${apex} TXT`);
    else if (p < 90) out.push(`nx${rnd(HOSTS)}.${apex} A`);
    else out.push(`w${rnd(HOSTS)}.wild.${apex} A`);
  }
  return `${out.join('\n')}\n`;
}

function freePort(): Promise<number> {
  return new Promise((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks
}

/** CPU of a process and its children that are still running (NSD forks its servers). */
function treeCpu(pid: number): number {
  let total = cpuSeconds(pid);
  for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
      if (Number(stat[1]) === pid) total += treeCpu(Number(p));
    } catch {}
  }
  return total;
}

function waitFor(port: number, name: string): void {
  for (let i = 0; i < 100; i++) {
    try {
      const out = execFileSync('dig', [
        '@127.0.0.1',
        '-p',
        String(port),
        '+time=1',
        '+tries=1',
        `h1.${name}`,
        'A',
      ]);
      if (/status: NOERROR/.test(String(out))) return;
    } catch {}
    execFileSync('sleep', ['0.1']);
  }
  throw new Error(`server on ${port} never answered for ${name}`);
}

interface Run {
  qps: number;
  latencyMs: number;
  lost: number;
  cpuUsPerQuery: number;
  codes: string;
}

async function dnsperf(port: number, file: string, dnssec: boolean, pid: number): Promise<Run> {
  const cpu0 = treeCpu(pid);
  const argv = ['-s', '127.0.0.1', '-p', String(port), '-d', file, '-l', String(DURATION)];
  argv.push('-c', String(args.clients), '-T', '1', '-q', '200');
  if (dnssec) argv.push('-D');
  const out = await new Promise<string>((res, rej) => {
    const child = spawn(...pinned('1', 'dnsperf', argv), { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (d) => {
      text += d;
    });
    child.stderr.on('data', (d) => {
      text += d;
    });
    child.once('close', (code) =>
      code === 0 ? res(text) : rej(new Error(`dnsperf exited ${code}\n${text}`)),
    );
  });
  const sent = Number(/Queries sent:\s+(\d+)/.exec(out)?.[1]);
  const completed = Number(/Queries completed:\s+(\d+)/.exec(out)?.[1]);
  const qps = Number(/Queries per second:\s+([\d.]+)/.exec(out)?.[1]);
  return {
    qps,
    latencyMs: Number(/Average Latency \(s\):\s+([\d.]+)/.exec(out)?.[1]) * 1000,
    lost: sent - completed,
    cpuUsPerQuery: ((treeCpu(pid) - cpu0) * 1e6) / Math.max(1, completed),
    codes: /Response codes:\s+(.*)/.exec(out)?.[1] ?? '',
  };
}

// --- set up both servers on the same zones ---
const plain = zone('bench.test', false);
const signed = zone('signed.test', true);
writeFileSync(
  join(dir, 'zones.json'),
  JSON.stringify([plain, signed], (_k, v) =>
    v && typeof v === 'object' && v.type === 'Buffer' ? Buffer.from(v.data).toString('base64') : v,
  ),
);
writeFileSync(join(dir, 'bench.test.zone'), zoneFile(plain));
writeFileSync(join(dir, 'signed.test.unsigned'), zoneFile(signed));
const keyBase = execFileSync('ldns-keygen', ['-a', 'ECDSAP256SHA256', '-k', 'signed.test'], { cwd: dir })
  .toString()
  .trim();
execFileSync(
  'ldns-signzone',
  ['-f', join(dir, 'signed.test.zone'), join(dir, 'signed.test.unsigned'), keyBase],
  {
    cwd: dir,
  },
);
writeFileSync(join(dir, 'q-plain.txt'), queries('bench.test'));
writeFileSync(join(dir, 'q-signed.txt'), queries('signed.test'));

const nsdPort = await freePort();
writeFileSync(
  join(dir, 'nsd.conf'),
  `server:
  ip-address: 127.0.0.1@${nsdPort}
  server-count: ${args['nsd-servers']}
  zonesdir: "${dir}"
  database: ""
  pidfile: "${dir}/nsd.pid"
  xfrdfile: "${dir}/xfrd.state"
  zonelistfile: "${dir}/zone.list"
  logfile: "${dir}/nsd.log"
  username: ""
  chroot: ""
  verbosity: 0
  # response rate limiting off, as in Fjord's child: all the load comes from one address
  rrl-ratelimit: 0
  rrl-whitelist-ratelimit: 0
remote-control:
  control-enable: no
zone:
  name: bench.test
  zonefile: bench.test.zone
zone:
  name: signed.test
  zonefile: signed.test.zone
`,
);
const nsd = spawn(...pinned('0', '/usr/sbin/nsd', ['-d', '-c', join(dir, 'nsd.conf')]), { stdio: 'ignore' });
children.add(nsd);

const fjord = spawn(
  ...pinned('0', process.execPath, [
    '--import',
    'tsx',
    join(ROOT, 'bench', 'dns-server.ts'),
    join(dir, 'zones.json'),
  ]),
  {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
children.add(fjord);
const fjordPort = await new Promise<number>((res, rej) => {
  let out = '';
  fjord.stdout!.on('data', (d) => {
    out += d;
    const m = /listening (\d+)/.exec(out);
    if (m) res(Number(m[1]));
  });
  fjord.once('exit', (code) => rej(new Error(`fjord dns exited ${code}`)));
});
waitFor(nsdPort, 'bench.test');
waitFor(fjordPort, 'bench.test');
waitFor(fjordPort, 'signed.test');
const floor = spawn(...pinned('0', process.execPath, [join(ROOT, 'bench', 'udp-floor.mjs')]), {
  stdio: ['ignore', 'pipe', 'inherit'],
});
children.add(floor);
const floorPort = await new Promise<number>((res) => {
  floor.stdout!.on('data', (d) => {
    const m = /listening (\d+)/.exec(String(d));
    if (m) res(Number(m[1]));
  });
});

const targets = [
  { name: 'NSD', port: nsdPort, pid: nsd.pid! },
  { name: 'Fjord', port: fjordPort, pid: fjord.pid! },
];
const kinds = [
  { kind: 'unsigned', file: join(dir, 'q-plain.txt'), dnssec: false },
  { kind: 'signed (DO)', file: join(dir, 'q-signed.txt'), dnssec: true },
];
console.log(
  `dnsperf ${DURATION}s × ${ROUNDS} rounds, ${args.clients} clients, NSD server-count ${args['nsd-servers']}, Node ${process.version}${args.pin ? ', servers on CPU 0, dnsperf on CPU 1' : ''}`,
);
// warm-up: fills Fjord's response and signature caches as a running server's would be
for (const t of targets) for (const k of kinds) await dnsperf(t.port, k.file, k.dnssec, t.pid);

const results = new Map<string, Run[]>();
const floorRuns: Run[] = [];
for (let round = 0; round < ROUNDS; round++) {
  floorRuns.push(await dnsperf(floorPort, kinds[0]!.file, false, floor.pid!));
  for (const k of kinds) {
    for (const t of targets) {
      const r = await dnsperf(t.port, k.file, k.dnssec, t.pid);
      const key = `${t.name}|${k.kind}`;
      results.set(key, [...(results.get(key) ?? []), r]);
    }
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  '\n| answers | server | qps (median) | mean latency ms | CPU µs/query | lost | qps ratio to NSD (per round) | CPU-per-query ratio |',
);
console.log('|---|---|---|---|---|---|---|---|');
let verdict = true;
for (const k of kinds) {
  const nsdRuns = results.get(`NSD|${k.kind}`)!;
  const fjordRuns = results.get(`Fjord|${k.kind}`)!;
  const ratios = fjordRuns.map((r, i) => r.qps / nsdRuns[i]!.qps);
  for (const [name, runs] of [
    ['NSD', nsdRuns],
    ['Fjord', fjordRuns],
  ] as const) {
    const ratio =
      name === 'Fjord'
        ? `**${median(ratios).toFixed(2)}×** (${ratios.map((x) => x.toFixed(2)).join(', ')})`
        : '1';
    // NSD's CPU time per query over Fjord's: the throughput ratio both would reach if each had
    // a core to itself, steadier than qps when dnsperf shares the machine's cores.
    const cpu = (rs: Run[]) => median(rs.map((r) => r.cpuUsPerQuery));
    const cpuRatio = name === 'Fjord' ? `${(cpu(nsdRuns) / cpu(fjordRuns)).toFixed(2)}×` : '1';
    console.log(
      `| ${k.kind} | ${name} | ${Math.round(median(runs.map((r) => r.qps)))} | ${median(runs.map((r) => r.latencyMs)).toFixed(2)} | ${median(runs.map((r) => r.cpuUsPerQuery)).toFixed(1)} | ${runs.reduce((n, r) => n + r.lost, 0)} | ${ratio} | ${cpuRatio} |`,
    );
  }
  if (k.kind === 'unsigned') verdict = median(ratios) >= TARGET_RATIO;
}
console.log(
  `\nNode's UDP floor (bench/udp-floor.mjs: echoes each query, no DNS work): ${Math.round(
    median(floorRuns.map((r) => r.qps)),
  )} qps, ${median(floorRuns.map((r) => r.cpuUsPerQuery)).toFixed(1)} CPU µs/query`,
);
console.log(`\nresponse codes (last Fjord run): ${results.get('Fjord|unsigned')!.at(-1)!.codes}`);
console.log(`response codes (last NSD run):   ${results.get('NSD|unsigned')!.at(-1)!.codes}`);
console.log(`\ntarget ≥ ${TARGET_RATIO}× NSD for unsigned answers: ${verdict ? 'met' : 'NOT met'}`);
for (const c of children) c.kill('SIGTERM');
