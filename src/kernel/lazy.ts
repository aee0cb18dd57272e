import { createRequire } from 'node:module';

const requireFromHere = createRequire(import.meta.url);

/**
 * A CommonJS package loaded on first use instead of at start. For packages only some
 * configurations or some requests need (Redis, SMTP, outbound HTTP, the IP databases): importing
 * every package at start was half of the start-up time (bench/README.md, bench:start).
 */
export function lazyPackage<T>(name: string): () => T {
  let mod: T | undefined;
  return () => {
    mod ??= requireFromHere(name) as T;
    return mod;
  };
}
