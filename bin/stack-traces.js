// Stack traces that name the TypeScript sources when Fjord runs from its bundle. Node maps only
// the modules it loads itself, and only by parsing every source map whole at load (a tenth of
// the start for the bundle's 4 MB map, and as much again for the first stack it formats); this
// reads the map the first time a stack is formatted, and decodes only the lines it looks up.
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';

const BASE64 = new Int8Array(128).fill(-1);
for (const [i, ch] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries())
  BASE64[ch.charCodeAt(0)] = i;
const COMMA = 44;
const SEMICOLON = 59;

/**
 * A source map's `mappings`, looked up by generated line and column (both 0-based). The fields
 * of a segment are relative to the previous segment's across lines, so one pass (no allocation
 * per segment) records where each line starts and the running values there.
 */
export class Mappings {
  constructor(map) {
    this.sources = map.sources.map((s) =>
      map.sourceRoot ? `${map.sourceRoot.replace(/\/?$/, '/')}${s}` : s,
    );
    this.text = map.mappings;
    let lines = 1;
    for (let i = this.text.indexOf(';'); i >= 0; i = this.text.indexOf(';', i + 1)) lines++;
    // Per line: where it starts in `text`, then the source, original line and original column.
    this.lines = new Int32Array(lines * 4);
    const v = [0, 0, 0, 0, 0];
    for (let i = 0, line = 0; i < this.text.length; ) {
      const c = this.text.charCodeAt(i);
      if (c === SEMICOLON) {
        i++;
        line++;
        this.lines[line * 4] = i;
        this.lines[line * 4 + 1] = v[1];
        this.lines[line * 4 + 2] = v[2];
        this.lines[line * 4 + 3] = v[3];
      } else if (c === COMMA) i++;
      else i = this.segment(i, v, true);
    }
  }

  /**
   * Decodes the segment at `i` into `v` (added to it), returning the index after it; `fields`
   * says how many it had.
   */
  segment(i, v, skipColumn) {
    const { text } = this;
    let field = 0;
    for (; i < text.length; field++) {
      const c = text.charCodeAt(i);
      if (c === COMMA || c === SEMICOLON) break;
      let value = 0;
      let shift = 0;
      let digit;
      do {
        digit = BASE64[text.charCodeAt(i++)];
        value += (digit & 31) << shift;
        shift += 5;
      } while (digit & 32);
      const delta = value & 1 ? -(value >>> 1) : value >>> 1;
      if (field > 0 || !skipColumn) v[field] += delta;
    }
    this.fields = field;
    return i;
  }

  /** `{ source, line, column }` (0-based) of the last segment at or before `column`, or null. */
  find(line, column) {
    const count = this.lines.length / 4;
    if (line >= count) return null;
    const [start, source, oline, ocol] = this.lines.subarray(line * 4, line * 4 + 4);
    const v = [0, source, oline, ocol, 0];
    const end = line + 1 < count ? this.lines[(line + 1) * 4] - 1 : this.text.length;
    let found = null;
    for (let i = start; i < end; ) {
      if (this.text.charCodeAt(i) === COMMA) {
        i++;
        continue;
      }
      i = this.segment(i, v, false);
      if (v[0] > column) break;
      found = this.fields > 1 ? [v[1], v[2], v[3]] : null; // one field: maps to nothing
    }
    return found && { source: this.sources[found[0]], line: found[1], column: found[2] };
  }
}

/** Formats stack traces with positions in `bundle` mapped through `${bundle}.map`. */
export function mapStackTraces(bundle) {
  let mappings; // Mappings, or null once the map proved unreadable
  const lookup = (line, column) => {
    if (mappings === undefined) {
      try {
        mappings = new Mappings(JSON.parse(readFileSync(`${bundle}.map`, 'utf8')));
      } catch {
        mappings = null;
      }
    }
    return mappings?.find(line, column) ?? null;
  };
  const frame = (site) => {
    const text = String(site);
    if (site.getFileName() !== bundle) return text;
    const line = site.getLineNumber();
    const column = site.getColumnNumber();
    const entry = line && column ? lookup(line - 1, column - 1) : null;
    if (!entry?.source) return text;
    const source = entry.source.startsWith('file:')
      ? new URL(entry.source).pathname
      : isAbsolute(entry.source)
        ? entry.source
        : resolve(dirname(bundle), entry.source);
    const at = `${bundle}:${line}:${column}`;
    const i = text.lastIndexOf(at);
    const mapped = `${source}:${entry.line + 1}:${entry.column + 1}`;
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
