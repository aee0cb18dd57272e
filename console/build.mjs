// Builds the web console (console/src) into dist/console with esbuild: one script and one style
// sheet named by their content's hash (served as immutable), the page that loads them, and a
// Brotli and a gzip copy of each asset (served to browsers that accept them). Run at `npm ci`
// by scripts/build.mjs; takes well under a second.
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CONSOLE_OUT = join(root, 'dist', 'console');

export async function buildConsole() {
  const esbuild = await import('esbuild');
  const temp = `${CONSOLE_OUT}.${process.pid}.tmp`;
  rmSync(temp, { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: { console: join(root, 'console', 'src', 'main.tsx') },
    outdir: join(temp, 'assets'),
    entryNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['chrome111', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    metafile: true,
    legalComments: 'linked',
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const script = outputs.find((f) => f.endsWith('.js'));
  const style = outputs.find((f) => f.endsWith('.css'));
  for (const file of outputs) {
    const body = readFileSync(join(temp, 'assets', file));
    writeFileSync(
      join(temp, 'assets', `${file}.br`),
      brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
    );
    writeFileSync(join(temp, 'assets', `${file}.gz`), gzipSync(body, { level: 9 }));
  }
  // Addresses relative to /console/: the page works behind a proxy that serves Fjord under a path.
  writeFileSync(
    join(temp, 'index.html'),
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Fjord console</title>
<link rel="stylesheet" href="/console/assets/${style}">
<script type="module" src="/console/assets/${script}"></script>
</head>
<body>
<div id="app"><p class="booting">Loading the console…</p><noscript>The console needs JavaScript.</noscript></div>
</body>
</html>
`,
  );
  mkdirSync(dirname(CONSOLE_OUT), { recursive: true });
  // Readable by every user whatever the umask of the process building it (Fjord's own is 077).
  chmodSync(dirname(CONSOLE_OUT), 0o755);
  rmSync(CONSOLE_OUT, { recursive: true, force: true });
  // Renamed into place whole: a running Fjord reads either the old build or the new one.
  const { renameSync } = await import('node:fs');
  renameSync(temp, CONSOLE_OUT);
  return CONSOLE_OUT;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const out = await buildConsole();
  console.log(`built ${out} in ${Math.round(performance.now() - started)} ms`);
}
