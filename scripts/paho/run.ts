// Runs the Eclipse Paho MQTT interoperability suites (client_test.py for 3.1.1, client_test5.py
// for MQTT 5) from an operator's checkout of eclipse/paho.mqtt.testing against Fjord's broker or
// Debian's Mosquitto, and prints pass/fail per test. The suites are not shipped here (another
// licence); this runner only maps configuration: it makes a device (or a Mosquitto login with a
// per-device ACL), and fjord_paho.py puts that login, client ids and a topic prefix under the
// unchanged tests.
//
//   npx tsx scripts/paho/run.ts --paho ~/paho.mqtt.testing                  # a throwaway Fjord
//   npx tsx scripts/paho/run.ts --paho … --api https://fjord.example --key fjp_…  # a running one
//   npx tsx scripts/paho/run.ts --paho … --target mosquitto                  # Debian's mosquitto
//   options: --versions 3.1.1,5  --json out.json  --python python3  --connack-wait 0.5  [test names…]
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import mqtt from 'mqtt';
import { stopServer } from '../../bench/lib/child-servers.js';
import { freePort, startFjordIot } from '../../bench/lib/mqtt-load.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const SUITES = { '3.1.1': 'client_test', '5': 'client_test5' } as const;
type Version = keyof typeof SUITES;

export interface Login {
  host: string;
  port: number;
  username: string;
  password: string;
  topicRoot: string;
  stop(): Promise<void>;
}

export interface SuiteResult {
  version: Version;
  results: Record<string, 'ok' | 'FAIL' | 'ERROR' | 'skip'>;
  passed: number;
  total: number;
  log: string;
}

/** The directory holding client_test.py, given the checkout or that directory itself. */
export function interopDir(paho: string): string {
  for (const dir of [join(paho, 'interoperability'), paho]) {
    if (existsSync(join(dir, 'client_test5.py')) && existsSync(join(dir, 'client_test.py')))
      return resolve(dir);
  }
  throw new Error(`${paho}: no interoperability/client_test.py and client_test5.py in it`);
}

/** A device on a Fjord reached through its API with a customer's key. */
export async function fjordLogin(api: string, key: string, deviceId: string): Promise<Login> {
  const r = await fetch(new URL('/v1/iot/devices', api), {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Paho interoperability', device_id: deviceId }),
  });
  const body = (await r.json()) as { mqtt_credentials?: Record<string, string | number> };
  if (r.status !== 201 || !body.mqtt_credentials)
    throw new Error(`device: ${r.status} ${JSON.stringify(body)}`);
  const c = body.mqtt_credentials;
  const root = String(c.topic_root);
  return {
    host: new URL(api).hostname,
    port: Number(c.port),
    username: String(c.username),
    password: String(c.password),
    topicRoot: root.endsWith('/') ? root : `${root}/`,
    async stop() {
      await fetch(new URL(`/v1/iot/devices/${deviceId}`, api), {
        method: 'DELETE',
        headers: { 'x-api-key': key },
      });
    },
  };
}

/** A throwaway Fjord (api and mqtt roles, SQLite in a temp dir) and a device on it. */
export async function throwawayFjord(): Promise<Login> {
  const fjord = await startFjordIot('api,mqtt');
  const login = await fjordLogin(fjord.api, fjord.pat, 'paho');
  return {
    ...login,
    async stop() {
      await stopServer(fjord.child);
      rmSync(fjord.dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Debian's mosquitto with the same shape of login as a Fjord device: a password, and an ACL that
 * lets the user publish and subscribe below `devices/<username>/` only.
 */
export async function mosquittoLogin(): Promise<Login> {
  const dir = mkdtempSync(join(tmpdir(), 'paho-mosquitto-'));
  const port = await freePort();
  const username = 'd_paho';
  const password = 'paho-interop';
  const made = spawnSync('mosquitto_passwd', ['-b', '-c', join(dir, 'passwd'), username, password]);
  if (made.status !== 0) throw new Error(`mosquitto_passwd: ${made.stderr}`);
  writeFileSync(join(dir, 'acl'), 'pattern readwrite devices/%u/#\n');
  // Run as root, mosquitto drops to its own user, which must be able to read both files.
  chmodSync(dir, 0o755);
  for (const f of ['passwd', 'acl']) chmodSync(join(dir, f), 0o644);
  writeFileSync(
    join(dir, 'mosquitto.conf'),
    [
      `listener ${port} 127.0.0.1`,
      'allow_anonymous false',
      `password_file ${join(dir, 'passwd')}`,
      `acl_file ${join(dir, 'acl')}`,
      'persistence false',
      'log_dest stderr',
      'log_type error',
      '',
    ].join('\n'),
  );
  const child = spawn('mosquitto', ['-c', join(dir, 'mosquitto.conf')], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  process.once('exit', () => child.kill('SIGKILL'));
  await new Promise((r) => setTimeout(r, 300));
  if (child.exitCode !== null) throw new Error(`mosquitto exited with ${child.exitCode}`);
  return {
    host: '127.0.0.1',
    port,
    username,
    password,
    topicRoot: `devices/${username}/`,
    async stop() {
      await stopServer(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs one suite with the login mapped in; resolves with each test's outcome. */
export function runSuite(
  interop: string,
  version: Version,
  login: Login,
  opts: { python?: string; tests?: string[]; echo?: boolean; verbose?: boolean; connackWait?: string } = {},
): Promise<SuiteResult> {
  const argv = [
    join(HERE, 'fjord_paho.py'),
    '--interop',
    interop,
    '--suite',
    SUITES[version],
    '--host',
    login.host,
    '--port',
    String(login.port),
    '--username',
    login.username,
    '--password',
    login.password,
    '--topic-root',
    login.topicRoot,
    ...(opts.connackWait ? ['--connack-wait', opts.connackWait] : []),
    ...(opts.tests ?? []),
  ];
  const child = spawn(opts.python ?? 'python3', argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  const results: SuiteResult['results'] = {};
  let log = '';
  let pending = '';
  child.stdout.on('data', (d) => {
    pending += d;
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      const m = /^PAHO (\S+) (ok|FAIL|ERROR|skip)$/.exec(line);
      if (!m) continue;
      results[m[1]!] = m[2] as SuiteResult['results'][string];
      if (opts.echo) console.log(`  MQTT ${version.padEnd(5)} ${m[2]!.padEnd(5)} ${m[1]}`);
    }
  });
  child.stderr.on('data', (d) => {
    log += d;
    if (opts.verbose) process.stderr.write(d);
  });
  return new Promise((resolveRun, reject) => {
    child.once('error', reject);
    child.once('close', () => {
      const values = Object.values(results);
      resolveRun({
        version,
        results,
        passed: values.filter((v) => v === 'ok').length,
        total: values.length,
        log,
      });
    });
  });
}

/**
 * One connection per protocol version before the suite: Paho's client waits only 0.5 s for a
 * CONNACK, and a broker's first login after its start (code loaded, caches cold) may take longer.
 */
export async function warmUp(login: Login): Promise<void> {
  for (const protocolVersion of [4, 5] as const) {
    const client = await mqtt.connectAsync(`mqtt://${login.host}:${login.port}`, {
      username: login.username,
      password: login.password,
      clientId: `${login.username}-warmup`,
      reconnectPeriod: 0,
      protocolVersion,
    });
    await client.endAsync();
  }
}

/**
 * The suite, then each test that did not pass once more on its own: on a loaded machine a 0.5 s
 * CONNACK wait can run out. Both outcomes are kept; `retried` names the tests that passed only then.
 */
export async function runWithRetry(
  interop: string,
  version: Version,
  login: Login,
  opts: Parameters<typeof runSuite>[3] = {},
): Promise<SuiteResult & { retried: string[] }> {
  const first = await runSuite(interop, version, login, opts);
  const retried: string[] = [];
  for (const [name, outcome] of Object.entries(first.results)) {
    if (outcome === 'ok' || outcome === 'skip' || name === 'setUpClass') continue;
    const again = await runSuite(interop, version, login, { ...opts, tests: [name], echo: false });
    if (again.results[name] === 'ok') {
      first.results[name] = 'ok';
      retried.push(name);
      if (opts.echo) console.log(`  MQTT ${version.padEnd(5)} ok    ${name} (on retry)`);
    }
    first.log += again.log;
  }
  const values = Object.values(first.results);
  return { ...first, passed: values.filter((v) => v === 'ok').length, total: values.length, retried };
}

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      paho: { type: 'string' },
      target: { type: 'string', default: 'fjord' },
      api: { type: 'string' },
      key: { type: 'string' },
      versions: { type: 'string', default: '3.1.1,5' },
      python: { type: 'string', default: 'python3' },
      json: { type: 'string' },
      verbose: { type: 'boolean', default: false },
      'connack-wait': { type: 'string' },
    },
  });
  if (!values.paho) throw new Error('--paho <checkout of eclipse/paho.mqtt.testing> is required');
  const interop = interopDir(values.paho);
  const versions = values.versions.split(',') as Version[];
  for (const v of versions) if (!(v in SUITES)) throw new Error(`--versions: ${v} is not 3.1.1 or 5`);
  const out: (SuiteResult & { retried: string[] })[] = [];
  for (const version of versions) {
    // A fresh broker (or device) per suite: one suite's leftovers (retained messages, sessions)
    // must not decide the other's results.
    const login =
      values.target === 'mosquitto'
        ? await mosquittoLogin()
        : values.api
          ? await fjordLogin(values.api, values.key ?? '', `paho-${version.replace(/\./g, '')}-${Date.now()}`)
          : await throwawayFjord();
    try {
      await warmUp(login);
      const r = await runWithRetry(interop, version, login, {
        python: values.python,
        tests: positionals,
        echo: true,
        verbose: values.verbose,
        connackWait: values['connack-wait'],
      });
      const retried = r.retried.length ? ` (${r.retried.length} only on retry: ${r.retried.join(', ')})` : '';
      console.log(`${values.target} MQTT ${version}: ${r.passed} of ${r.total} passed${retried}`);
      out.push(r);
    } finally {
      await login.stop();
    }
  }
  if (values.json) writeFileSync(values.json, JSON.stringify(out, null, 2));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
