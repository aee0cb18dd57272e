import ts from 'typescript';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript in bin/, without declarations
import { dynamicImportsIn, refuseDynamicImports } from '../../bin/bundle-check.js';

/**
 * The build check of scripts/build.mjs (bin/bundle-check.js): an import() left in the bundle
 * throws under bin/run-bundle.js's code cache, so the build refuses it. The whole bundle is built
 * and checked by the shipped tier (test/shipped/); here, the check itself on small sources.
 */
const SOURCE = [
  '"use strict";',
  '// a comment that mentions import("in-a-comment") is no call',
  'const text = "import(\\"in-a-string\\")";',
  'const tokens = () => import("gpt-tokenizer/encoding/cl100k_base");',
  'async function load(name) {',
  '  return await import(name + ".js");',
  '}',
  'const required = Promise.resolve().then(() => require("jose"));',
  'module.exports = { text, tokens, load, required };',
].join('\n');

describe('the bundle check', () => {
  it('finds each import() call, literal or computed, and nothing in comments or strings', () => {
    expect(dynamicImportsIn(ts, SOURCE)).toEqual([
      { line: 4, specifier: 'gpt-tokenizer/encoding/cl100k_base' },
      { line: 6, specifier: null },
    ]);
  });

  it('refuses such a bundle, naming each call', () => {
    expect(() => refuseDynamicImports(ts, SOURCE, 'dist/fjord.cjs')).toThrow(
      /dist\/fjord\.cjs:4: import\("gpt-tokenizer\/encoding\/cl100k_base"\)\n {2}dist\/fjord\.cjs:6: import\(<computed>\)/,
    );
  });

  it('lets a bundle that loads everything with require through', () => {
    expect(() =>
      refuseDynamicImports(ts, 'const j = Promise.resolve().then(() => require("jose"));', 'ok.cjs'),
    ).not.toThrow();
  });
});
