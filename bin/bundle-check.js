// The build check: a bundle that still calls import() cannot run under bin/run-bundle.js. Node 20
// gives a vm.Script that takes a V8 code cache no dynamic-import callback (not even
// vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER), so every import() left in dist/fjord.cjs throws
// ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING — at the first request that needs the module, never at
// start, which is why no start-up test sees it. bin/bundle.js has esbuild turn every import()
// into require(); this check reads the built bundle with a real parser (TypeScript's, so comments
// and strings that mention import() never count) and refuses any call that is left.

/**
 * The import() calls in the JavaScript `source`: each with its line and its specifier (null when
 * computed at run time). `ts` is the typescript module, passed in by the caller.
 */
export function dynamicImportsIn(ts, source, file = 'bundle.cjs') {
  const sourceFile = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
  const found = [];
  const visit = (node) => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [first] = node.arguments;
      found.push({
        line: sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line + 1,
        specifier: first && ts.isStringLiteralLike(first) ? first.text : null,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

/** Throws, naming each import() left in the bundle `source` (read from `file`), when there is any. */
export function refuseDynamicImports(ts, source, file) {
  const found = dynamicImportsIn(ts, source, file);
  if (found.length === 0) return;
  const list = found
    .map(
      (f) =>
        `  ${file}:${f.line}: import(${f.specifier === null ? '<computed>' : JSON.stringify(f.specifier)})`,
    )
    .join('\n');
  throw new Error(
    `the bundle calls import(), which throws ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING under the code ` +
      `cache of bin/run-bundle.js:\n${list}\n` +
      `Load the package with require (lazyPackage in src/kernel/lazy.ts), or let esbuild bundle it.`,
  );
}
