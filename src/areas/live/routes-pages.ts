import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { publicAccess } from '../../kernel/auth/principal.js';
import { defineRoute } from '../../kernel/http/route.js';
import type { LiveEventsTable } from './migrations.js';
import { WATCH_SCRIPT, WATCH_STYLE } from './page-assets.js';
import type { LiveService } from './service.js';

const VIEWER_TAG = 'Live events (viewer)';
/** The pages poll the watch endpoint this often. */
export const POLL_SECONDS = 10;

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

let hlsScript: Buffer | null = null;
/** hls.js from Fjord's own dependencies: the pages load nothing from a CDN. */
const hlsJs = () => {
  hlsScript ??= readFileSync(createRequire(import.meta.url).resolve('hls.js/dist/hls.min.js'));
  return hlsScript;
};

/**
 * No inline script, nothing from other origins; hls.js feeds the video element through a blob:
 * MediaSource. The watch page may not be framed (its password form could be overlaid); the embed
 * page may be framed by any site, unless embedding is off.
 */
function csp(baseUrl: string, frameable: boolean) {
  const origin = new URL(baseUrl).origin;
  return [
    "default-src 'self'",
    `connect-src 'self' ${origin}`,
    `media-src 'self' ${origin} blob:`,
    "worker-src 'self' blob:",
    "img-src 'self' data:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${frameable ? '*' : "'none'"}`,
  ].join('; ');
}

// Addresses in the pages are relative (`{live_url}/watch/{slug}` → `../assets/…`, `../../v1/…`),
// so they hold behind a proxy that serves Fjord under a path (FJORD_PUBLIC_URL with a path).
function shell(title: string, kind: 'watch' | 'embed', body: string) {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${esc(title)}</title>
<link rel="stylesheet" href="../assets/watch.css">
</head>
<body class="${kind}">
${body}
</body>
</html>
`;
}

function page(row: LiveEventsTable, kind: 'watch' | 'embed', nowMs: number) {
  const name = esc(row.name);
  const heading =
    kind === 'watch' ? `<h1>${name}</h1>${row.description ? `<p>${esc(row.description)}</p>` : ''}` : '';
  return shell(
    row.name,
    kind,
    `<main id="fjord-watch" data-slug="${esc(row.slug)}" data-api="../../v1/live-events/watch/${esc(row.slug)}" data-now="${nowMs}" data-poll="${POLL_SECONDS}">
${heading}
<div class="stage">
<video id="player" controls playsinline muted aria-label="${name}" hidden></video>
<p id="countdown" role="timer" aria-label="Time until the event starts" hidden>Starts in <time id="countdown-value"></time></p>
</div>
<p id="state" role="status" aria-live="polite">Loading…</p>
<form id="password-form" hidden>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Watch</button>
<p role="alert" aria-live="assertive"></p>
</form>
<form id="token-form" hidden>
<label for="token">Access code</label>
<input id="token" name="token" type="text" autocomplete="off" spellcheck="false" required>
<button type="submit">Watch</button>
<p role="alert" aria-live="assertive"></p>
</form>
<noscript><p>The player needs JavaScript.</p></noscript>
</main>
<script src="../assets/hls.min.js" defer></script>
<script src="../assets/watch.js" defer></script>`,
  );
}

const notice = (kind: 'watch' | 'embed', title: string, text: string, link = '') =>
  shell(title, kind, `<main><h1>${esc(title)}</h1><p role="status">${esc(text)}${link}</p></main>`);

function html(reply: FastifyReply, status: number, baseUrl: string, frameable: boolean, body: string) {
  reply.header('content-type', 'text/html; charset=utf-8');
  reply.header('content-security-policy', csp(baseUrl, frameable));
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
  // The page carries the clock's time (for the countdown): never reuse a stored copy.
  reply.header('cache-control', 'no-store');
  if (status === 200) return body;
  // A page of its own for refusals (the kernel's are JSON), sent here with its status.
  return reply.code(status).send(body);
}

const asset = (
  url: string,
  operationId: string,
  summary: string,
  type: string,
  body: () => string | Buffer,
) =>
  defineRoute({
    method: 'GET',
    url,
    operationId,
    tag: VIEWER_TAG,
    summary,
    access: publicAccess,
    idempotency: false,
    produces: type,
    response: { 200: Type.String() },
    handler: async ({ reply }) => {
      reply.header('content-type', type);
      reply.header('cache-control', 'public, max-age=3600');
      reply.header('x-content-type-options', 'nosniff');
      return body();
    },
  });

/**
 * The watch page (`{live_url}/watch/{slug}`) and the embed page (`{live_url}/embed/{slug}`),
 * with their script, style sheet and player (hls.js), all served by Fjord.
 */
export function pageRoutes(live: LiveService, baseUrl: () => string) {
  const load = async (slug: string) => {
    const row = await live.repo.bySlug(slug);
    return row && row.status !== 'draft' ? row : null;
  };
  return [
    defineRoute({
      method: 'GET',
      url: '/live/watch/:slug',
      operationId: 'getLiveEventWatchPage',
      tag: VIEWER_TAG,
      summary: "An event's watch page (HTML): countdown, live player, replay, password or token form",
      description:
        'Polls `GET /v1/live-events/watch/{slug}` every 10 seconds. A `?token=` in the address is used as the watch token of a `token` event. 404 (an HTML page) for drafts and unknown slugs.',
      access: publicAccess,
      idempotency: false,
      params: Type.Object({ slug: Type.String({ maxLength: 200 }) }),
      produces: 'text/html; charset=utf-8',
      response: { 200: Type.String({ description: 'An HTML page' }) },
      errors: [404],
      errorsProduce: 'text/html; charset=utf-8',
      handler: async ({ params, reply }) => {
        const row = await load(params.slug);
        if (!row)
          return html(
            reply,
            404,
            baseUrl(),
            false,
            notice('watch', 'Event not found', 'There is no event here.'),
          );
        return html(reply, 200, baseUrl(), false, page(row, 'watch', live.now()));
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/live/embed/:slug',
      operationId: 'getLiveEventEmbedPage',
      tag: VIEWER_TAG,
      summary: "An event's embed page (HTML, for an iframe): the player alone",
      description:
        'The watch page without its heading, for `<iframe src="{embed_url}">` on any site. 403 (an HTML page saying so) when the event\'s `embed_enabled` is false; 404 for drafts and unknown slugs.',
      access: publicAccess,
      idempotency: false,
      params: Type.Object({ slug: Type.String({ maxLength: 200 }) }),
      produces: 'text/html; charset=utf-8',
      response: { 200: Type.String({ description: 'An HTML page' }) },
      errors: [403, 404],
      errorsProduce: 'text/html; charset=utf-8',
      handler: async ({ params, reply }) => {
        const row = await load(params.slug);
        if (!row)
          return html(
            reply,
            404,
            baseUrl(),
            true,
            notice('embed', 'Event not found', 'There is no event here.'),
          );
        if (row.embed_enabled !== 1)
          return html(
            reply,
            403,
            baseUrl(),
            true,
            notice(
              'embed',
              row.name,
              'Embedding is turned off for this event. ',
              `<a href="../watch/${esc(row.slug)}" target="_top">Watch it on its own page</a>.`,
            ),
          );
        return html(reply, 200, baseUrl(), true, page(row, 'embed', live.now()));
      },
    }),
    asset(
      '/live/assets/watch.js',
      'getLiveEventPageScript',
      'The watch and embed pages’ script',
      'text/javascript; charset=utf-8',
      () => WATCH_SCRIPT,
    ),
    asset(
      '/live/assets/watch.css',
      'getLiveEventPageStyle',
      'The watch and embed pages’ style sheet',
      'text/css; charset=utf-8',
      () => WATCH_STYLE,
    ),
    asset(
      '/live/assets/hls.min.js',
      'getLiveEventPagePlayer',
      'The pages’ HLS player (hls.js), served by Fjord',
      'text/javascript; charset=utf-8',
      hlsJs,
    ),
  ];
}
