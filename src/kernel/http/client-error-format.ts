import type { AnyRoute, ErrorFormat } from './route.js';

/**
 * The error format of the route a request Node's parser refused was meant for, read from the
 * first line of what arrived (`GET /v1/models HTTP/1.1`): an OpenAI client that sent headers
 * over 16 KB still gets its 431 in OpenAI's shape. Null when the line is not there or no route
 * with its own format matches.
 */
export function clientErrorFormatOf(routes: AnyRoute[]): (rawPacket: unknown) => ErrorFormat | null {
  const patterns = routes
    .filter((r) => r.errorFormat)
    .map((r) => ({
      method: r.method as string,
      path: new RegExp(
        `^${r.url
          .split('/')
          .map((part: string) =>
            part.startsWith(':') ? '[^/?#]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
          )
          .join('/')}/?(?:[?#]|$)`,
      ),
      format: r.errorFormat as ErrorFormat,
    }));
  return (rawPacket) => {
    if (!Buffer.isBuffer(rawPacket) && typeof rawPacket !== 'string') return null;
    const line = /^([A-Z]+) (\S+)/.exec(String(rawPacket).slice(0, 20_000));
    if (!line) return null;
    const [, method, target] = line;
    return patterns.find((p) => p.method === method && p.path.test(target!))?.format ?? null;
  };
}
