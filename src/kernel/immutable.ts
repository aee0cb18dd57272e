/**
 * Deeply frozen values. An answer a handler builds once and returns on every call (a catalogue
 * read at start) is frozen, so that no caller can change what every later caller is given; the
 * API's response serializer turns a frozen answer into JSON once (kernel/http/app.ts).
 */

/** Freezes `value` and everything it holds; returns it. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
