import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { publicAccess } from '../../kernel/auth/principal.js';
import { AppError } from '../../kernel/errors.js';
import { defineRoute } from '../../kernel/http/route.js';

const TAG = 'Console';

/**
 * The console's built files (dist/console, made by console/build.mjs at `npm ci`). Found beside
 * the bundle (dist/fjord.cjs) or, when Fjord runs from its sources, three folders up.
 */
function consoleDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const dir of [join(here, 'console'), join(here, '..', '..', '..', 'dist', 'console')])
    if (existsSync(join(dir, 'index.html'))) return dir;
  return join(here, '..', '..', '..', 'dist', 'console');
}

/**
 * Scripts and styles from this origin only, and no inline script or style: a script injected
 * into a page could not run. Images may be data: or blob: URLs (downloads made in the page).
 * The live events' player is Fjord's own hls.js, which feeds the video element from a blob: (MSE)
 * and may run a blob: worker.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  // The speech transcript plays the file the browser uploaded (blob:); GPU videos come from here.
  "media-src 'self' blob:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "font-src 'self'",
  "manifest-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  map: 'application/json',
};

const MISSING_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Fjord console</title></head>
<body><main><h1>The console is not built</h1><p>Run <code>npm run build</code> (or <code>npm ci</code>) in Fjord's folder.</p></main></body></html>`;

/**
 * `/console/` and its deep links (the page routes in the browser), and the hashed assets: each
 * asset's name carries its content's hash, so it is cached for a year as `immutable`; the page
 * itself is never cached, so a new build is picked up at the next load. Assets are compressed at
 * build time (Brotli and gzip) and sent in the best form the browser accepts.
 */
export function consoleStaticRoutes() {
  const files = new Map<string, Buffer | null>();
  let dir: string | undefined;
  const read = (name: string): Buffer | null => {
    if (files.has(name)) return files.get(name)!;
    dir ??= consoleDir();
    const path = join(dir, name);
    const body = existsSync(path) ? readFileSync(path) : null;
    files.set(name, body);
    return body;
  };
  const page = async ({ reply }: { reply: FastifyReply }) => {
    const body = read('index.html');
    reply.header('content-security-policy', CONSOLE_CSP);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('cache-control', 'no-cache');
    reply.type('text/html; charset=utf-8');
    return body ?? MISSING_PAGE;
  };
  const segment = Type.String({ maxLength: 300 });
  const pageRoute = (url: string, operationId: string, summary: string, params?: string[]) =>
    defineRoute({
      method: 'GET',
      url,
      operationId,
      tag: TAG,
      summary,
      access: publicAccess,
      params: params ? Type.Object(Object.fromEntries(params.map((p) => [p, segment]))) : undefined,
      produces: 'text/html; charset=utf-8',
      response: { 200: Type.String({ description: 'An HTML page' }) },
      handler: page,
    });
  // The console's own addresses (`/console/dns/example.com`) are routed in the browser; each
  // depth it uses answers with the same page, so a reload or a bookmark lands where it was.
  return [
    pageRoute('/console', 'getConsole', 'The web console (HTML)'),
    pageRoute('/console/:area', 'getConsoleAreaPage', "A console area's page (HTML)", ['area']),
    pageRoute('/console/:area/:item', 'getConsoleItemPage', "A console resource's page (HTML)", [
      'area',
      'item',
    ]),
    pageRoute(
      '/console/:area/:item/:view',
      'getConsoleItemViewPage',
      "A view of a console resource's page (HTML)",
      ['area', 'item', 'view'],
    ),
    defineRoute({
      method: 'GET',
      url: '/console/assets/:file',
      operationId: 'getConsoleAsset',
      tag: TAG,
      summary: "The console's scripts and styles, named by their content's hash (cached as immutable)",
      access: publicAccess,
      params: Type.Object({ file: Type.String({ maxLength: 128, pattern: '^[\\w.-]+$' }) }),
      produces: 'text/javascript; charset=utf-8',
      response: { 200: Type.String({ description: 'A script or a style sheet' }) },
      errors: [404],
      handler: async ({ params, raw, reply }) => {
        const type = TYPES[params.file.split('.').pop() ?? ''];
        const plain = type ? read(`assets/${params.file}`) : null;
        if (!type || !plain) throw new AppError('not_found', 'not_found', `No console asset ${params.file}.`);
        reply.header('cache-control', 'public, max-age=31536000, immutable');
        reply.header('x-content-type-options', 'nosniff');
        reply.header('vary', 'accept-encoding');
        reply.type(type);
        const accepts = String(raw.headers['accept-encoding'] ?? '');
        for (const [encoding, suffix] of [
          ['br', '.br'],
          ['gzip', '.gz'],
        ] as const) {
          const packed = new RegExp(`\\b${encoding}\\b`).test(accepts)
            ? read(`assets/${params.file}${suffix}`)
            : null;
          if (packed) {
            reply.header('content-encoding', encoding);
            return packed;
          }
        }
        return plain;
      },
    }),
  ];
}
