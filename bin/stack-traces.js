// Stack traces that name the TypeScript sources when Fjord runs from its bundle. Node maps only
// the modules it loads itself, and only by parsing every source map at load (a tenth of the
// start for the bundle's 4 MB map); this reads the map the first time a stack is formatted.
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, isAbsolute, resolve } from 'node:path';

/** Formats stack traces with positions in `bundle` mapped through `${bundle}.map`. */
export function mapStackTraces(bundle) {
  let map; // SourceMap | null once read (null: no usable map)
  const sourceMap = () => {
    if (map === undefined) {
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${bundle}.map`, 'utf8')));
      } catch {
        map = null;
      }
    }
    return map;
  };
  const frame = (site) => {
    const text = String(site);
    if (site.getFileName() !== bundle) return text;
    const line = site.getLineNumber();
    const column = site.getColumnNumber();
    const entry = line && column ? sourceMap()?.findEntry(line - 1, column - 1) : undefined;
    if (!entry?.originalSource) return text;
    const source = entry.originalSource.startsWith('file:')
      ? new URL(entry.originalSource).pathname
      : isAbsolute(entry.originalSource)
        ? entry.originalSource
        : resolve(dirname(bundle), entry.originalSource);
    const at = `${bundle}:${line}:${column}`;
    const i = text.lastIndexOf(at);
    const mapped = `${source}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
    return i < 0 ? text : text.slice(0, i) + mapped + text.slice(i + at.length);
  };
  Error.prepareStackTrace = (error, sites) => {
    let head;
    try {
      head = Error.prototype.toString.call(error);
    } catch {
      head = 'Error';
    }
    return head + sites.map((site) => `\n    at ${frame(site)}`).join('');
  };
}
