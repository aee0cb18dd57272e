import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * bin/quiet-debug.cjs, which the bundle gets for `require('debug')`: loggers that do nothing while
 * DEBUG is unset at start, the real package when it is set. Run in a child process each, since
 * the choice is made when the module loads.
 */
const SHIM = join(import.meta.dirname, '..', '..', 'bin', 'quiet-debug.cjs');

function run(script: string, env: Record<string, string | undefined>) {
  const { DEBUG: _unset, ...base } = process.env;
  const r = spawnSync(process.execPath, ['-e', script], {
    env: { ...base, ...env, DEBUG_COLORS: '0' },
    encoding: 'utf8',
  });
  return { stdout: r.stdout.trim(), stderr: r.stderr, status: r.status };
}

const SCRIPT = `
const createDebug = require(${JSON.stringify(SHIM)});
const log = createDebug('mqtt-packet:parser');
const sub = log.extend('length');
log('parsed %d bytes', 42);
sub('child %s', 'line');
console.log(JSON.stringify({
  enabled: log.enabled,
  namespace: log.namespace,
  sub: sub.namespace,
  sameApi: typeof createDebug.enable === 'function' && typeof createDebug.humanize === 'function',
}));
`;

describe('the bundle’s debug loggers', () => {
  it('do nothing, and allocate nothing for their arguments, while DEBUG is unset', () => {
    const r = run(SCRIPT, {});
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      enabled: false,
      namespace: 'mqtt-packet:parser',
      sub: 'mqtt-packet:parser:length',
      sameApi: true,
    });
    expect(r.stderr).toBe('');
  });

  it('are the real package’s when DEBUG names them at start', () => {
    const r = run(SCRIPT, { DEBUG: 'mqtt-packet:*' });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ enabled: true, sub: 'mqtt-packet:parser:length' });
    expect(r.stderr).toContain('mqtt-packet:parser parsed 42 bytes');
    expect(r.stderr).toContain('mqtt-packet:parser:length child line');
  });
});
