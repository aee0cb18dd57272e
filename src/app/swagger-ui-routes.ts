import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { publicAccess } from '../kernel/auth/principal.js';
import { AppError } from '../kernel/errors.js';
import { defineRoute } from '../kernel/http/route.js';
import { OpenApiDocument } from './system-routes.js';

const TAG = 'System';

/** Swagger UI's files Fjord serves, by name, with their media types. */
const FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/** Starts Swagger UI on this server's document; a file, so the page runs under a strict CSP. */
const INITIALIZER = `window.onload = () => {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: 'StandaloneLayout',
  });
};
`;

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>Fjord API — Swagger UI</title>
    <link rel="stylesheet" href="/docs/static/swagger-ui.css" />
    <link rel="stylesheet" href="/docs/static/index.css" />
    <link rel="icon" type="image/png" href="/docs/static/favicon-32x32.png" sizes="32x32" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/static/swagger-ui-bundle.js"></script>
    <script src="/docs/static/swagger-ui-standalone-preset.js"></script>
    <script src="/docs/static/swagger-initializer.js"></script>
  </body>
</html>
`;

/**
 * Swagger UI at `/docs`, for people who prefer it to the reference page: its built files come
 * from the npm package (nothing from a CDN) and are read on first request. Fjord serves them
 * itself rather than through the Fastify plugin, whose file server and YAML support cost a tenth
 * of every start.
 */
export function swaggerUiRoutes(openapi: () => unknown) {
  let staticDir: string | undefined;
  const files = new Map<string, Buffer>();
  const read = (name: string) => {
    staticDir ??= join(dirname(createRequire(import.meta.url).resolve('@fastify/swagger-ui')), 'static');
    const body = files.get(name) ?? readFileSync(join(staticDir, name));
    files.set(name, body);
    return body;
  };
  return [
    defineRoute({
      method: 'GET',
      url: '/docs',
      operationId: 'getSwaggerUi',
      tag: TAG,
      summary: 'Swagger UI over this server’s OpenAPI document (HTML)',
      access: publicAccess,
      produces: 'text/html; charset=utf-8',
      response: { 200: Type.String({ description: 'An HTML page' }) },
      handler: async () => PAGE,
    }),
    defineRoute({
      method: 'GET',
      url: '/docs/json',
      operationId: 'getSwaggerUiDocument',
      tag: TAG,
      summary: 'The OpenAPI document Swagger UI shows (the same as /openapi.json)',
      access: publicAccess,
      response: { 200: OpenApiDocument },
      handler: async () => openapi(),
    }),
    defineRoute({
      method: 'GET',
      url: '/docs/static/:file',
      operationId: 'getSwaggerUiFile',
      tag: TAG,
      summary: 'Swagger UI’s scripts, styles and icons, served locally',
      access: publicAccess,
      params: Type.Object({ file: Type.String({ maxLength: 64 }) }),
      produces: 'text/javascript; charset=utf-8',
      response: { 200: Type.String({ description: 'A script, a style sheet or an icon' }) },
      errors: [404],
      handler: async ({ params, reply }) => {
        reply.header('cache-control', 'public, max-age=86400');
        if (params.file === 'swagger-initializer.js') {
          reply.type('text/javascript; charset=utf-8');
          return INITIALIZER;
        }
        const type = FILES[params.file];
        if (!type) throw new AppError('not_found', 'not_found', `No Swagger UI file ${params.file}.`);
        reply.type(type);
        return read(params.file);
      },
    }),
  ];
}
