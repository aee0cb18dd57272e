import type { XMLParser } from 'fast-xml-parser';
import { lazyPackage } from '../../../kernel/lazy.js';
import { s3Errors } from './errors.js';

/** S3's XML: written by hand (small, ordered, escaped), read with fast-xml-parser. */
export const XML_HEADER = '<?xml version="1.0" encoding="UTF-8"?>\n';
export const S3_NS = 'http://s3.amazonaws.com/doc/2006-03-01/';

export function esc(value: string | number | boolean): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: XML 1.0 cannot carry these raw; they go out as character references
  return String(value).replace(/[&<>"'\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, (c) => {
    switch (c) {
      case '&':
        return '&amp;';
      case '<':
        return '&lt;';
      case '>':
        return '&gt;';
      case '"':
        return '&quot;';
      case "'":
        return '&apos;';
      default:
        return `&#x${c.charCodeAt(0).toString(16)};`;
    }
  });
}

/** `<name>value</name>`, or nothing when value is null/undefined. */
export const el = (name: string, value: string | number | boolean | null | undefined): string =>
  value === null || value === undefined ? '' : `<${name}>${esc(value)}</${name}>`;

export const doc = (root: string, inner: string, ns = true): string =>
  `${XML_HEADER}<${root}${ns ? ` xmlns="${S3_NS}"` : ''}>${inner}</${root}>`;

const options = {
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: true,
  removeNSPrefix: true,
  processEntities: true,
  // Clients escape quotes as &#34; (rclone) or &quot; (others): numeric references must decode too.
  htmlEntities: true,
  isArray: (name: string) =>
    [
      'Part',
      'Object',
      'CORSRule',
      'AllowedOrigin',
      'AllowedMethod',
      'AllowedHeader',
      'ExposeHeader',
      'Tag',
      'Rule',
      'Grant',
    ].includes(name),
};
const fastXml = lazyPackage<typeof import('fast-xml-parser')>('fast-xml-parser');
let parser: XMLParser | null = null;
/** For documents whose values are object keys: a key is bytes, and `' '` or `'a '` is a key. */
let keepingWhitespace: XMLParser | null = null;

// biome-ignore lint/suspicious/noExplicitAny: the parsed document is checked field by field by each caller
export function parseXml(text: string, root: string, values: 'trimmed' | 'exact' = 'trimmed'): any {
  let parsed: Record<string, unknown>;
  try {
    // Made on the first request with a body to parse, not at start.
    parser ??= new (fastXml().XMLParser)(options);
    keepingWhitespace ??= new (fastXml().XMLParser)({ ...options, trimValues: false });
    parsed = (values === 'exact' ? keepingWhitespace : parser).parse(text, true) as Record<string, unknown>;
  } catch {
    throw s3Errors.malformedXml();
  }
  const body = parsed[root];
  if (body === undefined) throw s3Errors.malformedXml();
  return body === '' ? {} : body;
}

export const asText = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
