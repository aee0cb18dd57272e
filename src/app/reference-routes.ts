import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { publicAccess } from '../kernel/auth/principal.js';
import { defineRoute } from '../kernel/http/route.js';

const TAG = 'System';

/**
 * The API reference people read: Scalar's renderer over `/openapi.json`, served from Fjord
 * itself (its script ships in the npm package; nothing is fetched from a CDN, so it works
 * offline and in closed networks), and `GET /` pointing at it and at the machine-readable forms.
 */
export function referenceRoutes(baseUrl: () => string) {
  let script: Buffer | null = null;
  // Read on first use: 3 MB that most processes (workers, tests) never serve.
  const scalarScript = () => {
    const entry = createRequire(import.meta.url).resolve('@scalar/fastify-api-reference');
    script ??= readFileSync(join(dirname(entry), 'js', 'standalone.js'));
    return script;
  };
  const page = () => `<!doctype html>
<html lang="en">
  <head>
    <title>Fjord API reference</title>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
  </head>
  <body>
    <div id="app"></div>
    <script src="/reference/scalar.js"></script>
    <script>
      Scalar.createApiReference('#app', ${safeJson({
        url: '/openapi.json',
        title: 'Fjord',
        hideClientButton: false,
        defaultHttpClient: { targetKey: 'shell', clientKey: 'curl' },
        servers: [{ url: baseUrl() }],
      })})
    </script>
  </body>
</html>
`;
  return [
    defineRoute({
      method: 'GET',
      url: '/',
      operationId: 'getIndex',
      tag: TAG,
      summary: 'Where the reference and the OpenAPI document are',
      access: publicAccess,
      response: {
        200: Type.Object({
          name: Type.String(),
          reference: Type.String({ description: 'The API reference, for people' }),
          openapi: Type.String({ description: 'The OpenAPI 3.1 document' }),
          swagger_ui: Type.String(),
        }),
      },
      handler: async () => ({
        name: 'Fjord',
        reference: `${baseUrl()}/reference`,
        openapi: `${baseUrl()}/openapi.json`,
        swagger_ui: `${baseUrl()}/docs`,
      }),
    }),
    defineRoute({
      method: 'GET',
      url: '/reference',
      operationId: 'getReference',
      tag: TAG,
      summary: 'The API reference (HTML), with a request example for every operation',
      access: publicAccess,
      produces: 'text/html; charset=utf-8',
      response: { 200: Type.String({ description: 'An HTML page' }) },
      handler: async () => page(),
    }),
    defineRoute({
      method: 'GET',
      url: '/reference/scalar.js',
      operationId: 'getReferenceScript',
      tag: TAG,
      summary: 'The reference page’s renderer (Scalar), served locally',
      access: publicAccess,
      produces: 'text/javascript; charset=utf-8',
      response: { 200: Type.String({ description: 'JavaScript' }) },
      handler: async ({ reply }) => {
        reply.header('cache-control', 'public, max-age=86400');
        return scalarScript();
      },
    }),
  ];
}

/** JSON inside a <script>: no `<` that could close it early. */
const safeJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');
