/**
 * @module capability-bounds
 * How many endpoint records, and model records under each, one runtime's latch state holds, and
 * the least-recently-used eviction that keeps it there across imports and ordinary use.
 *
 * A record that holds no latch is evicted first: dropping it loses nothing, since a fresh one
 * is the same. Past that, the least recently used record goes, whatever it latched; the cost is
 * one refused request to learn it again. Only the oldest few records are looked at for one
 * without a latch, so eviction stays cheap however full the state is.
 */

import { defaultState, defineSlot, slotOf, type RuntimeState } from "../state/state.js";

/** The two bounds on a runtime's latch records. */
export interface CapabilityBounds {
  /**
   * The most endpoint records (a base URL and an API key) a runtime holds.
   * @default 1000
   */
  maxEndpoints: number;
  /**
   * The most model records one endpoint record holds.
   * @default 100
   */
  maxModelsPerEndpoint: number;
}

/** The bounds a runtime starts with. */
export const CAPABILITY_BOUNDS_DEFAULTS: Readonly<CapabilityBounds> = Object.freeze({ maxEndpoints: 1000, maxModelsPerEndpoint: 100 });

/** How many of the least recently used records are looked at for one that holds no latch. */
const IDLE_SEARCH = 32;

/** A state's bounds with how many records they evicted so far. @internal */
export interface BoundsState {
  /** The bounds in force, changed in place by configure. */
  readonly bounds: CapabilityBounds;
  /** Endpoint records evicted so far. */
  evictedEndpoints: number;
  /** Model records evicted so far. */
  evictedModels: number;
}

const BOUNDS = defineSlot<BoundsState>("capabilities.bounds", () => ({ bounds: { ...CAPABILITY_BOUNDS_DEFAULTS }, evictedEndpoints: 0, evictedModels: 0 }));

/** The state's bounds and eviction counts, the same object for the state's life. @internal */
export function capabilityBoundsIn(state: RuntimeState): BoundsState {
  return slotOf(state, BOUNDS);
}

/** {@link configureCapabilities} on an explicit runtime state. @internal */
export function configureCapabilitiesIn(state: RuntimeState, options: Partial<CapabilityBounds> = {}): CapabilityBounds {
  const { bounds } = slotOf(state, BOUNDS);
  for (const key of Object.keys(CAPABILITY_BOUNDS_DEFAULTS) as (keyof CapabilityBounds)[]) {
    const value: unknown = options?.[key];
    if (typeof value === "number" && value >= 1) bounds[key] = value === Infinity ? Infinity : Math.floor(value);
  }
  return { ...bounds };
}

/**
 * Changes how many endpoint records and model records per endpoint the default runtime's latch
 * state holds, and returns the bounds now in force.
 *
 * Past a bound, making a record evicts the least recently used one that holds no latch, else the
 * least recently used one; an import is bounded the same way and lists what it left out or
 * evicted in its `ignored`. A field left out, or given anything but a number of at least 1,
 * keeps what it had; `Infinity` means no bound. A lower bound applies from the next record made.
 *
 * @param options - The bounds to change.
 * @returns The whole set in force after the call.
 * @example
 * configureCapabilities({ maxEndpoints: 10_000 });
 */
export function configureCapabilities(options?: Partial<CapabilityBounds>): CapabilityBounds {
  return configureCapabilitiesIn(defaultState, options);
}

/** Marks `key` as just used, moving it to the young end of the map's order. @internal */
export function touchEntry<K, V>(map: Map<K, V>, key: K, value: V): void {
  map.delete(key);
  map.set(key, value);
}

/**
 * Makes room for one more entry in `map`, evicting until it holds fewer than `limit`: first a
 * latch-free entry among the oldest few, else the oldest; returns how many went.
 * @internal
 */
export function makeRoom<K, V>(map: Map<K, V>, limit: number, holdsLatch: (value: V) => boolean, onEvict?: (value: V) => void): number {
  let evicted = 0;
  while (map.size > 0 && map.size >= limit) {
    let victim: K | undefined;
    let looked = 0;
    for (const [key, value] of map) {
      if (!holdsLatch(value)) {
        victim = key;
        break;
      }
      if (++looked >= IDLE_SEARCH) break;
    }
    if (victim === undefined) victim = map.keys().next().value as K;
    const value = map.get(victim) as V;
    map.delete(victim);
    onEvict?.(value);
    evicted += 1;
  }
  return evicted;
}
