import type { Migration } from 'kysely';
import type { AnyRoute } from './http/route.js';
import type { Kernel, RoleServer } from './kernel.js';

/**
 * How areas are wired together. An area declares the services of other areas it `needs` (it
 * cannot work without them) and those it can use when present (`optional`); the composition root
 * sets areas up in an order that satisfies every need and refuses to start, naming the area and
 * the need, when one is missing or the needs form a cycle.
 *
 * Where two areas would need each other (account lists how many servers use an SSH key; the
 * servers area needs account's SSH keys) the later one *plugs into* an extension point the
 * earlier one declares: `plugs` in its instance, read by the earlier area through the
 * `PlugBoard` it was given at set-up. The board is filled once every area is set up, before any
 * request is served.
 *
 * The typed face of this (service and extension-point names, `defineArea`) lives in
 * `src/areas/wiring.ts`; the kernel only sees names.
 */

export interface AreaInstance<S = unknown> {
  routes: AnyRoute[];
  /** The area's service, the only thing other areas may use. */
  service?: S;
  servers?: RoleServer[];
  /** Implementations of other areas' extension points, by point name. */
  plugs?: Record<string, unknown>;
  /** Drop in-memory caches after an emulator reset. */
  onReset?(): Promise<void>;
}

/** The erased module the composition root handles; areas build it with `defineArea`. */
export interface AreaModule {
  name: string;
  needs: readonly string[];
  optional: readonly string[];
  migrations?: Record<string, Migration>;
  setup(kernel: Kernel, deps: Record<string, unknown>, plugs: PlugBoard): Promise<AreaInstance>;
}

/** Implementations plugged into extension points, collected from every area's instance. */
export class PlugBoard<Points = Record<string, unknown>> {
  private readonly points = new Map<keyof Points, unknown[]>();
  private sealed = false;

  /** Every implementation plugged into `point` (empty until the areas are all set up). */
  all<K extends keyof Points>(point: K): readonly Points[K][] {
    let list = this.points.get(point);
    if (!list) {
      list = [];
      this.points.set(point, list);
    }
    return list as Points[K][];
  }

  /** Called by the composition root only. */
  plug(point: string, impl: unknown): void {
    if (this.sealed) throw new Error(`extension point ${point}: plugged after start`);
    (this.all(point as keyof Points) as unknown[]).push(impl);
  }

  seal(): void {
    this.sealed = true;
  }
}

export class WiringError extends Error {}

/**
 * The areas in an order where each comes after everything it needs or can optionally use (when
 * that is present). Throws a `WiringError` naming a missing need, a duplicate name or a cycle.
 */
export function orderAreas(areas: readonly AreaModule[]): AreaModule[] {
  const byName = new Map<string, AreaModule>();
  for (const a of areas) {
    if (byName.has(a.name)) throw new WiringError(`two areas are named "${a.name}"`);
    byName.set(a.name, a);
  }
  for (const a of areas) {
    for (const need of a.needs) {
      if (!byName.has(need))
        throw new WiringError(
          `area "${a.name}" needs the "${need}" area, which is not in the list of areas (src/areas/index.ts)`,
        );
    }
  }
  const ordered: AreaModule[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (a: AreaModule, path: string[]) => {
    const s = state.get(a.name);
    if (s === 'done') return;
    if (s === 'visiting') {
      const cycle = [...path.slice(path.indexOf(a.name)), a.name];
      throw new WiringError(`areas need each other in a cycle: ${cycle.join(' → ')}`);
    }
    state.set(a.name, 'visiting');
    for (const dep of [...a.needs, ...a.optional]) {
      const d = byName.get(dep);
      if (d) visit(d, [...path, a.name]);
    }
    state.set(a.name, 'done');
    ordered.push(a);
  };
  // The list's own order breaks ties, so set-up (and route registration) stays predictable.
  for (const a of areas) visit(a, []);
  return ordered;
}

/** Optional needs that are absent from this build, for the banner and the services metadata. */
export function absentOptionalNeeds(areas: readonly AreaModule[]): { area: string; need: string }[] {
  const names = new Set(areas.map((a) => a.name));
  return areas.flatMap((a) =>
    a.optional.filter((o) => !names.has(o)).map((need) => ({ area: a.name, need })),
  );
}
