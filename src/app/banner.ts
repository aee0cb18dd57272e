import type { Role } from '../config/config.js';
import type { Fjord } from './fjord.js';

/** Roles served by an area's protocol server (api and worker are the kernel's own). */
const PROTOCOL_ROLES = ['s3', 'dns', 'mqtt', 'rtmp'];

/** The human start-up summary: listeners, back ends (real or simulated), and where the dev credentials are. */
export function banner(fjord: Fjord, roles: string[], startMs: number): string {
  const { kernel } = fjord;
  const lines = [
    '',
    `  Fjord is up in ${startMs} ms — store: ${kernel.config.store.kind === 'sqlite' ? `SQLite ${kernel.config.store.path}` : 'PostgreSQL'}${kernel.config.emulator ? ' — emulator mode' : ''}`,
  ];
  const offset = kernel.clock.offsetSeconds;
  if (offset !== 0) {
    lines.push(
      `  Clock: ${formatOffset(offset)} ahead of real time (emulator clock; \`POST /admin/v1/reset\` puts it back)`,
    );
    if (!kernel.config.emulator)
      lines.push('  WARNING: not in emulator mode, yet this data dir keeps an emulator clock offset');
  }
  lines.push('', '  Listeners');
  for (const l of kernel.registry.listeners)
    lines.push(`    ${l.role.padEnd(7)} ${l.protocol.padEnd(6)} ${l.address}`);
  if (roles.includes('api')) {
    const base = kernel.baseUrl();
    lines.push(
      `    reference       ${base}/reference   (OpenAPI: ${base}/openapi.json, Swagger UI: ${base}/docs)`,
    );
  }
  if (roles.includes('worker')) lines.push('    worker          jobs, schedules and webhook delivery');
  // From what started: a role asked for whose area is not in this build opened nothing.
  const idle = roles.filter((r) => PROTOCOL_ROLES.includes(r) && !fjord.serversStarted.has(r as Role));
  if (idle.length)
    lines.push(`    (roles with no area in this build, so nothing listens: ${idle.join(', ')})`);
  lines.push('', '  Back ends');
  if (kernel.registry.backends.length === 0) lines.push('    (none yet)');
  for (const b of kernel.registry.backends) {
    lines.push(
      `    ${b.area.padEnd(16)} ${b.name.padEnd(18)} ${b.simulated ? 'SIMULATED' : 'real     '} ${b.driver}${b.detail ? ` — ${b.detail}` : ''}`,
    );
  }
  if (kernel.registry.absentNeeds.length) {
    lines.push('', '  Not in this build (the areas that could use them work without)');
    for (const a of kernel.registry.absentNeeds)
      lines.push(`    ${a.area.padEnd(16)} would use the ${a.need} area`);
  }
  if (fjord.devCredentialsPath) {
    lines.push('', `  Development credentials: ${fjord.devCredentialsPath}`);
    lines.push(
      `    curl -H "X-API-Key: $(jq -r .pat ${fjord.devCredentialsPath})" ${kernel.baseUrl()}/v1/account/profile`,
    );
  }
  lines.push('');
  return lines.join('\n');
}

/** 93784 → "1d 2h 3m 4s": the emulator offset, readable at a glance. */
export function formatOffset(seconds: number): string {
  let rest = Math.round(seconds);
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86400],
    ['h', 3600],
    ['m', 60],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  if (rest > 0 || parts.length === 0) parts.push(`${rest}s`);
  return parts.join(' ');
}
