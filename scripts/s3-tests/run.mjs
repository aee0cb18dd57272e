#!/usr/bin/env node
// Runs Ceph's s3-tests (https://github.com/ceph/s3-tests) against Fjord and writes what each test
// did to a JSON summary that scripts/s3-tests/render.mjs turns into docs/s3.md's conformance table.
//
//   node scripts/s3-tests/run.mjs <s3-tests checkout> [--out FILE] [--target DATA_DIR]
//        [--rerun-failed SUMMARY] [--timeout SECONDS] [--python /usr/bin/python3] [--suite COMMIT] [--keep]
//        [-- extra pytest arguments]
//
// --suite names the suite's commit when the checkout is not a git work tree (a `git archive`
// export); otherwise it is read from the checkout.
//
// The checkout is the operator's: nothing is downloaded here. Without --target a Fjord is started
// on a fresh data directory (roles api and s3, free ports, FJORD_S3_DEFAULT_OBJECT_OWNERSHIP=
// ObjectWriter so buckets take ACLs as the suite expects) and stopped at the end; with --target,
// the Fjord whose data directory is given (its dev-credentials.json names the API and the
// operator token) is used as it runs. Either way the suite's users are made through the API: main
// is the development customer, alt and tenant two more customers, each with an account key over
// all its buckets; main gets two KMS keys. The Python modules come from Debian (see docs/s3.md).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

// The tier-1 selection: the two main files, less the markers whose features Fjord does not have
// or whose tests cannot run as written (docs/s3.md says why for each).
export const FILES = ['s3tests/functional/test_s3.py', 's3tests/functional/test_headers.py'];
export const EXCLUDED_MARKERS = [
  'fails_on_aws',
  'fails_on_rgw',
  'lifecycle_expiration',
  'lifecycle_transition',
  'cloud_transition',
  'cloud_restore',
  'storage_class',
  's3website',
  's3website_routing_rules',
  's3website_redirect_location',
  'bucket_logging',
  'bucket_logging_cleanup',
  'fails_without_logging_rollover',
  's3select',
  'sns',
  'appendobject',
  'iam_account',
  'iam_cross_account',
  'iam_role',
  'iam_tenant',
  'iam_user',
  'user_policy',
  'role_policy',
  'group_policy',
  'group',
  'session_policy',
  'abac_test',
  'test_of_sts',
  'webidentity_test',
];

function parseArgs(argv) {
  const args = { checkout: null, out: join(REPO, 'scripts/s3-tests/results.json'), target: null };
  args.python = '/usr/bin/python3'; // Debian's, with its python3-* modules (not a pyenv or venv one)
  args.keep = false;
  args.suite = null;
  args.rerun = null;
  // Seconds per test: the tests that write 1000+ objects take two minutes on a loaded machine
  args.timeout = '300';
  args.pytest = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      args.pytest = argv.slice(i + 1);
      break;
    }
    if (a === '--out') args.out = resolve(argv[++i]);
    else if (a === '--target') args.target = resolve(argv[++i]);
    else if (a === '--rerun-failed') args.rerun = resolve(argv[++i]);
    else if (a === '--timeout') args.timeout = argv[++i];
    else if (a === '--python') args.python = argv[++i];
    else if (a === '--suite') args.suite = argv[++i];
    else if (a === '--keep') args.keep = true;
    else if (!a.startsWith('-') && !args.checkout) args.checkout = resolve(a);
    else throw new Error(`unknown argument ${a}`);
  }
  if (!args.checkout || !existsSync(join(args.checkout, FILES[0]))) {
    throw new Error('usage: run.mjs <s3-tests checkout> [--out FILE] [--target DATA_DIR] [-- pytest args]');
  }
  return args;
}

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function startFjord(dataDir) {
  const [apiPort, s3Port] = [await freePort(), await freePort()];
  const env = {
    ...process.env,
    FJORD_DATA_DIR: dataDir,
    FJORD_API_PORT: String(apiPort),
    FJORD_S3_PORT: String(s3Port),
    FJORD_S3_DEFAULT_OBJECT_OWNERSHIP: 'ObjectWriter',
  };
  const log = join(dataDir, 'fjord.log');
  const child = spawn(process.execPath, [join(REPO, 'bin/fjord.js'), 'start', '--roles', 'api,s3'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const chunks = [];
  child.stdout.on('data', (c) => chunks.push(c));
  child.stderr.on('data', (c) => chunks.push(c));
  child.on('exit', () => writeFileSync(log, Buffer.concat(chunks)));
  const credentials = join(dataDir, 'dev-credentials.json');
  for (let waited = 0; !existsSync(credentials); waited += 250) {
    if (child.exitCode !== null) throw new Error(`Fjord exited:\n${Buffer.concat(chunks)}`);
    if (waited > 120_000) throw new Error('Fjord did not start within 2 minutes');
    await sleep(250);
  }
  return { child, log: () => Buffer.concat(chunks).toString() };
}

async function call(api, auth, path, body) {
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await fetch(api + path, {
        method: body ? 'POST' : 'GET',
        headers: { ...auth, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${body ? 'POST' : 'GET'} ${path}: ${res.status} ${text}`);
      return JSON.parse(text);
    } catch (e) {
      // the API may still be opening its listener just after the credentials file appears
      if (attempt > 40 || !String(e?.cause?.code ?? '').startsWith('ECONNREFUSED')) throw e;
      await sleep(250);
    }
  }
}

// Owner.DisplayName as Fjord shows it to a customer's own keys (bucket-directory.ts)
function displayName(p) {
  const person = [p.first_name, p.last_name].filter(Boolean).join(' ');
  return p.company || person || p.email;
}

async function makeUser(api, pat) {
  const auth = { 'x-api-key': pat };
  const profile = await call(api, auth, '/v1/account/profile');
  const key = await call(api, auth, '/v1/storage/keys', {
    name: 's3-tests',
    actions: ['s3:ListAllMyBuckets', 's3:CreateBucket'],
    buckets: [{ bucket_name: '*' }],
  });
  return {
    user_id: profile.customer_id,
    display_name: displayName(profile),
    email: profile.email,
    access_key: key.access_key,
    secret_key: key.secret_key,
    endpoint: key.endpoint,
  };
}

async function writeConfig(dataDir, file) {
  const dev = JSON.parse(readFileSync(join(dataDir, 'dev-credentials.json'), 'utf8'));
  const api = dev.api_url;
  const operator = { authorization: `Bearer ${dev.operator_token}` };
  const customer = (email) => call(api, operator, '/admin/v1/customers', { email, plan: 'enterprise' });
  const stamp = Date.now().toString(36);
  const [alt, tenant] = [
    await customer(`alt-${stamp}@s3-tests.example`),
    await customer(`tenant-${stamp}@s3-tests.example`),
  ];
  const main = await makeUser(api, dev.pat);
  const altUser = await makeUser(api, alt.pat);
  const tenantUser = await makeUser(api, tenant.pat);
  const kms = async () => (await call(api, { 'x-api-key': dev.pat }, '/v1/storage/kms-keys', {})).arn;
  const endpoint = new URL(main.endpoint);
  const section = (name, u, extra = {}) =>
    [
      `[${name}]`,
      ...Object.entries({
        user_id: u.user_id,
        display_name: u.display_name,
        email: u.email,
        access_key: u.access_key,
        secret_key: u.secret_key,
        ...extra,
      }).map(([k, v]) => `${k} = ${v}`),
    ].join('\n');
  const region = await regionOf(main.endpoint, main);
  const text = [
    '[DEFAULT]',
    `host = ${endpoint.hostname}`,
    `port = ${endpoint.port || (endpoint.protocol === 'https:' ? 443 : 80)}`,
    `is_secure = ${endpoint.protocol === 'https:' ? 'True' : 'False'}`,
    'ssl_verify = False',
    '[fixtures]',
    'bucket prefix = fjord-{random}-',
    'iam name prefix = s3-tests-',
    'iam path prefix = /s3-tests/',
    section('s3 main', main, { api_name: region, kms_keyid: await kms(), kms_keyid2: await kms() }),
    section('s3 alt', altUser),
    section('s3 tenant', tenantUser, { tenant: 'testx' }),
    // the IAM tests are not run, but the suite reads these sections when it loads
    section('iam', main),
    section('iam root', main),
    section('iam alt root', altUser),
    '',
  ].join('\n');
  writeFileSync(file, text);
  return { endpoint: main.endpoint, region };
}

// The region Fjord reports (the first of FJORD_S3_REGIONS, AWS's GetBucketLocation): the suite
// signs for it and sends it as the LocationConstraint of the buckets it creates
async function regionOf(endpoint, user) {
  const { S3Client, GetBucketLocationCommand, CreateBucketCommand, DeleteBucketCommand } = await import(
    '@aws-sdk/client-s3'
  );
  const s3 = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: user.access_key, secretAccessKey: user.secret_key },
  });
  const bucket = `fjord-region-${Date.now().toString(36)}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  try {
    const { LocationConstraint } = await s3.send(new GetBucketLocationCommand({ Bucket: bucket }));
    return LocationConstraint || 'us-east-1';
  } finally {
    await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
    s3.destroy();
  }
}

function unescapeXml(s) {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, n) => String.fromCodePoint(Number(n)))
    .replace(/&amp;/g, '&');
}

// pytest's JUnit XML: one <testcase> per test, with a <failure>, <error> or <skipped> child
export function parseJunit(xml) {
  const tests = {};
  const re = /<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g;
  for (let m = re.exec(xml); m; m = re.exec(xml)) {
    const attr = (n) => unescapeXml(new RegExp(`\\b${n}="([^"]*)"`).exec(m[1])?.[1] ?? '');
    const body = m[2] ?? '';
    const child = /<(failure|error|skipped)\b([^>]*?)(?:\/>|>)/.exec(body);
    const outcome = child ? { failure: 'failed', error: 'error', skipped: 'skipped' }[child[1]] : 'passed';
    const message = child ? unescapeXml(/\bmessage="([^"]*)"/.exec(child[2])?.[1] ?? '') : '';
    const file = attr('classname').split('.').pop();
    tests[`${file}::${attr('name')}`] = {
      outcome,
      ...(message ? { message: message.split('\n')[0].slice(0, 300) } : {}),
    };
  }
  return tests;
}

function git(cwd, ...args) {
  return new Promise((ok) => {
    const p = spawn('git', ['-C', cwd, ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    p.stdout.on('data', (c) => (out += c));
    p.on('close', () => ok(out.trim()));
    p.on('error', () => ok(''));
  });
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const work = mkdtempSync(join(tmpdir(), 'fjord-s3-tests-'));
  const dataDir = args.target ?? join(work, 'data');
  let fjord = null;
  // The commit under test is the one Fjord starts from, not whatever is checked out when it ends
  const fjordCommit = (await git(REPO, 'describe', '--always', '--dirty')) || null;
  try {
    if (!args.target) fjord = await startFjord(dataDir);
    const conf = join(work, 's3tests.conf');
    const { endpoint, region } = await writeConfig(dataDir, conf);
    console.error(`s3-tests: Fjord at ${endpoint} (region ${region}), configuration ${conf}`);
    const junit = join(work, 'junit.xml');
    const marks = EXCLUDED_MARKERS.map((m) => `not ${m}`).join(' and ');
    // --rerun-failed: only the tests an earlier summary has failing, by node id; their outcomes
    // replace the earlier ones and the summary says so (a fix can still break a test that passed,
    // which only a whole run shows)
    const earlier = args.rerun ? JSON.parse(readFileSync(args.rerun, 'utf8')) : null;
    const nodeIds = earlier
      ? Object.entries(earlier.tests)
          .filter(([, t]) => t.outcome === 'failed' || t.outcome === 'error')
          .map(([name]) => `s3tests/functional/${name.replace('::', '.py::')}`)
      : FILES;
    // -v: a line per test as it ends, so a long run shows where it is
    const pytestArgs = ['-m', 'pytest', '-p', 'no:cacheprovider', '--timeout', args.timeout, '-v', '-rN'];
    pytestArgs.push(
      '-o',
      'junit_family=xunit1',
      `--junitxml=${junit}`,
      ...nodeIds,
      '-m',
      marks,
      ...args.pytest,
    );
    const code = await new Promise((ok) => {
      const p = spawn(args.python, pytestArgs, {
        cwd: args.checkout,
        env: { ...process.env, S3TEST_CONF: conf },
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      p.on('exit', (c) => ok(c));
    });
    if (!existsSync(junit)) throw new Error(`pytest wrote no results (exit ${code})`);
    const ran = parseJunit(readFileSync(junit, 'utf8'));
    const tests = earlier ? { ...earlier.tests, ...ran } : ran;
    const counts = { selected: 0, passed: 0, failed: 0, error: 0, skipped: 0 };
    for (const t of Object.values(tests)) {
      counts.selected++;
      counts[t.outcome]++;
    }
    const boto3 = await new Promise((ok) => {
      const p = spawn(args.python, ['-c', 'import boto3; print(boto3.__version__)'], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      let out = '';
      p.stdout.on('data', (c) => (out += c));
      p.on('close', () => ok(out.trim()));
    });
    const summary = {
      date: new Date().toISOString(),
      fjord: fjordCommit,
      suite: (await git(args.checkout, 'rev-parse', '--short', 'HEAD')) || args.suite,
      boto3,
      files: FILES,
      excludedMarkers: EXCLUDED_MARKERS,
      objectOwnership: args.target ? null : 'ObjectWriter',
      counts,
      ...(earlier
        ? {
            rerun: {
              of: { date: earlier.date, fjord: earlier.fjord, counts: earlier.counts },
              tests: Object.keys(ran).length,
            },
          }
        : {}),
      tests,
    };
    writeFileSync(args.out, `${JSON.stringify(summary, null, 2)}\n`);
    console.error(
      `s3-tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.error} errors, ${counts.skipped} skipped of ${counts.selected}; ${args.out}`,
    );
  } finally {
    if (fjord) {
      fjord.child.kill('SIGTERM');
      await new Promise((r) => (fjord.child.exitCode !== null ? r() : fjord.child.once('exit', r)));
    }
    if (!args.keep) rmSync(work, { recursive: true, force: true });
    else console.error(`s3-tests: kept ${work}`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(e?.stack ?? e);
    process.exit(1);
  });
}
