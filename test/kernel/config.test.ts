import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { VARIABLES } from '../../src/config/variables.js';

/** loadConfig with a given environment, collecting warnings. */
function load(env: Record<string, string>) {
  const warnings: string[] = [];
  const config = loadConfig(env, (m) => warnings.push(m));
  return { config, warnings };
}

function problemsOf(env: Record<string, string>): { error: ConfigError; lines: string[] } {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const error = err as ConfigError;
    return { error, lines: error.message.split('\n').slice(1) };
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

const tempFile = (name: string, text: string) => {
  const path = join(mkdtempSync(join(tmpdir(), 'fjord-config-')), name);
  writeFileSync(path, text);
  return path;
};

describe('loadConfig defaults', () => {
  it('binds to loopback on the documented ports with SQLite in ./.fjord', () => {
    const { config, warnings } = load({});
    expect(warnings).toEqual([]);
    expect(config.host).toBe('127.0.0.1');
    expect(config.ports).toEqual({ api: 8080, s3: 9000, dns: 5300, mqtt: 1883, rtmp: 1935 });
    expect(config.dataDir).toBe(resolve('.fjord'));
    expect(config.store).toEqual({ kind: 'sqlite', path: resolve('.fjord', 'fjord.sqlite') });
    expect(config.roles).toEqual(['api', 's3', 'dns', 'mqtt', 'rtmp', 'worker']);
    expect(config.emulator).toBe(false);
    expect(config.devCredentials).toBe(true);
    expect(config.logLevel).toBe('info');
    expect(config.bodyLimitBytes).toBe(1048576);
    expect(config.workerPollMs).toBe(500);
    expect(config.oidc).toBeNull();
    expect(config.redisUrl).toBeNull();
    expect(config.publicUrl).toBeNull();
    expect(config.operatorToken).toBeNull();
    expect(config.dataKey).toBeNull();
    expect(config.rateLimitOverrides).toEqual({});
    expect(config.webhookAllowPrivate).toBe(false);
  });

  it('ignores variables that are not FJORD_*', () => {
    const { config, warnings } = load({ HOME: '/root', PORT: 'nope', API_PORT: '1' });
    expect(warnings).toEqual([]);
    expect(config.ports.api).toBe(8080);
  });

  it('keeps the SQLite file in the data directory, or where FJORD_DATABASE_URL says', () => {
    expect(load({ FJORD_DATA_DIR: '/srv/fjord' }).config.store).toEqual({
      kind: 'sqlite',
      path: '/srv/fjord/fjord.sqlite',
    });
    expect(load({ FJORD_DATABASE_URL: 'sqlite:/tmp/x.db' }).config.store).toEqual({
      kind: 'sqlite',
      path: '/tmp/x.db',
    });
    expect(load({ FJORD_DATABASE_URL: 'sqlite::memory:' }).config.store).toEqual({
      kind: 'sqlite',
      path: ':memory:',
    });
  });
});

describe('loadConfig values', () => {
  it('selects PostgreSQL for postgres:// and postgresql://, and turns dev credentials off there', () => {
    for (const url of ['postgres://fjord:pw@db.internal:5432/fjord', 'postgresql://db/fjord']) {
      const { config } = load({ FJORD_DATABASE_URL: url });
      expect(config.store).toEqual({ kind: 'postgres', url });
      expect(config.devCredentials).toBe(false);
    }
    const forced = load({ FJORD_DATABASE_URL: 'postgres://db/fjord', FJORD_DEV_CREDENTIALS: 'yes' });
    expect(forced.config.devCredentials).toBe(true);
  });

  it('parses each kind of value', () => {
    const { config } = load({
      FJORD_HOST: '0.0.0.0',
      FJORD_API_PORT: ' 0 ',
      FJORD_S3_PORT: '9100',
      FJORD_ROLES: 'worker, api,api',
      FJORD_EMULATOR: 'on',
      FJORD_LOG_LEVEL: 'debug',
      FJORD_BODY_LIMIT_BYTES: '2048',
      FJORD_PUBLIC_URL: 'https://api.example.com/',
      FJORD_REDIS_URL: 'redis://:pw@127.0.0.1:6379/0',
      FJORD_OIDC_ISSUER: 'https://login.example.com',
      FJORD_OIDC_AUDIENCE: 'fjord',
      FJORD_RATE_LIMITS: '{"regions":{"points":3,"duration":60}}',
      FJORD_DATA_KEY: Buffer.alloc(32, 7).toString('base64'),
      FJORD_WEBHOOK_ALLOW_PRIVATE: '1',
    });
    expect(config.host).toBe('0.0.0.0');
    expect(config.ports.api).toBe(0);
    expect(config.ports.s3).toBe(9100);
    expect(config.roles).toEqual(['worker', 'api']);
    expect(config.emulator).toBe(true);
    expect(config.logLevel).toBe('debug');
    expect(config.bodyLimitBytes).toBe(2048);
    expect(config.publicUrl).toBe('https://api.example.com');
    expect(config.redisUrl).toBe('redis://:pw@127.0.0.1:6379/0');
    expect(config.oidc).toEqual({
      issuer: 'https://login.example.com',
      audience: 'fjord',
      jwksUrl: null,
      // The console's sign-in is off without a client id; the button is named after the issuer.
      clientId: null,
      clientSecret: null,
      name: 'login.example.com',
    });
    expect(config.rateLimitOverrides).toEqual({ regions: { points: 3, duration: 60 } });
    expect(config.dataKey).toBe(Buffer.alloc(32, 7).toString('base64'));
    expect(config.webhookAllowPrivate).toBe(true);
  });

  it('reads the public addresses handed to devices and encoders', () => {
    const { config } = load({
      FJORD_MQTT_PUBLIC_ADDRESS: 'mqtt.example.com:8883',
      FJORD_RTMP_PUBLIC_URL: 'rtmp://live.example.com:1935/live/',
    });
    expect(config.mqttPublicAddress).toEqual({ host: 'mqtt.example.com', port: 8883 });
    expect(config.rtmpPublicUrl).toBe('rtmp://live.example.com:1935/live');
    expect(load({ FJORD_MQTT_PUBLIC_ADDRESS: '[2001:db8::1]:1883' }).config.mqttPublicAddress).toEqual({
      host: '2001:db8::1',
      port: 1883,
    });
    expect(load({}).config).toMatchObject({ mqttPublicAddress: null, rtmpPublicUrl: null });
    const { lines } = problemsOf({
      FJORD_MQTT_PUBLIC_ADDRESS: 'mqtt.example.com',
      FJORD_RTMP_PUBLIC_URL: 'http://live.example.com/live',
    });
    expect(lines.join('\n')).toMatch(/FJORD_MQTT_PUBLIC_ADDRESS=.*host:port/);
    expect(lines.join('\n')).toMatch(/FJORD_RTMP_PUBLIC_URL=.*unsupported scheme/);
  });

  it('reports every bad value in one ConfigError, one line per variable', () => {
    const { error, lines } = problemsOf({
      FJORD_API_PORT: '70000',
      FJORD_EMULATOR: 'maybe',
      FJORD_LOG_LEVEL: 'loud',
      FJORD_HOST: '127.0.0.1',
    });
    expect(error.problems).toHaveLength(3);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^\s+FJORD_API_PORT="70000": /);
    expect(lines.find((l) => l.includes('FJORD_EMULATOR='))).toMatch(/boolean/);
    expect(lines.find((l) => l.includes('FJORD_LOG_LEVEL='))).toMatch(/one of .*info/);
    expect(error.message).not.toContain('FJORD_HOST');
  });

  it.each([
    ['FJORD_API_PORT', 'http'],
    ['FJORD_API_PORT', '-1'],
    ['FJORD_S3_PORT', '65536'],
    ['FJORD_HOST', 'not a host'],
    ['FJORD_ROLES', 'api,ftp'],
    ['FJORD_DATABASE_URL', 'mysql://db/fjord'],
    ['FJORD_PUBLIC_URL', 'example.com'],
    ['FJORD_PUBLIC_URL', 'ftp://example.com'],
    ['FJORD_OIDC_ISSUER', 'login.example.com'],
    ['FJORD_BODY_LIMIT_BYTES', '100'],
    ['FJORD_BODY_LIMIT_BYTES', '1.5'],
    ['FJORD_WORKER_POLL_MS', '5'],
    ['FJORD_WORKER_POLL_MS', '600000'],
    ['FJORD_RATE_LIMITS', '[1]'],
    ['FJORD_RATE_LIMITS', '{"regions":{"points":-1}}'],
    ['FJORD_RATE_LIMITS', '{"regions":{"pints":5}}'],
    ['FJORD_RATE_LIMITS', 'not json'],
    ['FJORD_DEV_CREDENTIALS', '2'],
  ])('refuses %s=%j', (name, value) => {
    const { error, lines } = problemsOf({ [name]: value });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.trim().startsWith(`${name}=`)).toBe(true);
    expect(error.problems[0]).toMatch(new RegExp(`^${name}=.+: .+`));
  });

  it('does not echo secrets in errors', () => {
    const secret = 'hunter2-this-is-not-a-32-byte-key';
    const { error } = problemsOf({ FJORD_DATA_KEY: secret });
    expect(error.message).toContain('FJORD_DATA_KEY');
    expect(error.message).toContain('32 bytes');
    expect(error.message).not.toContain(secret);
    expect(error.message).not.toContain(secret.slice(0, 10));
    // Nor the password of a connection URL that is refused for another reason.
    const url = problemsOf({ FJORD_DATABASE_URL: 'mysql://fjord:s3cr3t-pw@db/fjord' });
    expect(url.error.message).toContain('FJORD_DATABASE_URL');
    expect(url.error.message).not.toContain('s3cr3t-pw');
    const redis = problemsOf({ FJORD_REDIS_URL: 'tcp://:r3dis-pw@cache:6379' });
    expect(redis.error.message).not.toContain('r3dis-pw');
  });

  it('warns about unknown FJORD_* variables without failing', () => {
    const { config, warnings } = load({ FJORD_API_PROT: '9999', FJORD_COLOUR: 'blue', FJORD_HOST: '::1' });
    expect(config.host).toBe('::1');
    expect(config.ports.api).toBe(8080);
    expect(warnings).toHaveLength(2);
    expect(warnings.find((w) => w.includes('FJORD_API_PROT'))).toBeTruthy();
    expect(warnings.find((w) => w.includes('FJORD_COLOUR'))).toBeTruthy();
  });
});

describe('FJORD_CONFIG_FILE', () => {
  it('reads an env file, with comments, export and quotes; the environment wins', () => {
    const file = tempFile(
      'fjord.env',
      [
        '# Fjord settings',
        '',
        'FJORD_API_PORT=9090',
        'export FJORD_S3_PORT=9191',
        'FJORD_LOG_LEVEL="warn"',
        "FJORD_OIDC_AUDIENCE='my app'",
        'FJORD_HOST = 10.0.0.1',
        '  # FJORD_MQTT_PORT=1',
        'FJORD_DATA_DIR=/from/file',
      ].join('\n'),
    );
    const { config, warnings } = load({ FJORD_CONFIG_FILE: file, FJORD_HOST: '10.0.0.2' });
    expect(warnings).toEqual([]);
    expect(config.ports.api).toBe(9090);
    expect(config.ports.s3).toBe(9191);
    expect(config.ports.mqtt).toBe(1883);
    expect(config.logLevel).toBe('warn');
    expect(config.host).toBe('10.0.0.2');
    expect(config.dataDir).toBe('/from/file');
  });

  it('reads a JSON file, with numbers, booleans and objects; the environment wins', () => {
    const file = tempFile(
      'fjord.json',
      JSON.stringify({
        FJORD_API_PORT: 9090,
        FJORD_EMULATOR: true,
        FJORD_LOG_LEVEL: 'error',
        FJORD_RATE_LIMITS: { regions: { points: 5, duration: 10 } },
      }),
    );
    const { config, warnings } = load({ FJORD_CONFIG_FILE: file, FJORD_LOG_LEVEL: 'debug' });
    expect(warnings).toEqual([]);
    expect(config.ports.api).toBe(9090);
    expect(config.emulator).toBe(true);
    expect(config.logLevel).toBe('debug');
    expect(config.rateLimitOverrides).toEqual({ regions: { points: 5, duration: 10 } });
  });

  it('reports bad values from the file like those from the environment, and warns about unknown ones', () => {
    const file = tempFile('bad.env', 'FJORD_API_PORT=eighty\nFJORD_WHATEVER=1\n');
    const warnings: string[] = [];
    expect(() => loadConfig({ FJORD_CONFIG_FILE: file }, (m) => warnings.push(m))).toThrow(ConfigError);
    try {
      loadConfig({ FJORD_CONFIG_FILE: file });
    } catch (err) {
      expect((err as ConfigError).problems).toEqual([expect.stringMatching(/^FJORD_API_PORT="eighty": /)]);
    }
    expect(warnings.some((w) => w.includes('FJORD_WHATEVER'))).toBe(true);
  });

  it('fails with a ConfigError when the file is missing or not valid JSON', () => {
    const missing = problemsOf({ FJORD_CONFIG_FILE: '/nonexistent/fjord.env' });
    expect(missing.lines[0]).toContain('FJORD_CONFIG_FILE');
    const broken = problemsOf({ FJORD_CONFIG_FILE: tempFile('broken.json', '{"FJORD_API_PORT": ') });
    expect(broken.lines[0]).toContain('FJORD_CONFIG_FILE');
  });
});

describe('docs/configuration.md', () => {
  it('documents every variable in VARIABLES', () => {
    const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    const missing = Object.keys(VARIABLES).filter((name) => !new RegExp(`\\b${name}\\b`).test(doc));
    expect(missing).toEqual([]);
  });
});
