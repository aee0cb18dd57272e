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

/**
 * node-postgres, loaded with the first PostgreSQL connection (the store on PostgreSQL, a
 * PostgreSQL database engine). 64-bit integers come back as numbers: every count and time Fjord
 * stores fits in 2^53.
 */
export const pgModule = (() => {
  let mod: typeof import('pg').default | undefined;
  return () => {
    if (!mod) {
      mod = requireFromHere('pg') as typeof import('pg').default;
      mod.types.setTypeParser(20, (v) => Number(v));
    }
    return mod;
  };
})();
