/**
 * @module state/state
 * The container of every cache and latch the library keeps.
 *
 * A module that needs state defines a slot with {@link defineSlot} (an immutable key, safe at
 * module level) and reads it with {@link slotOf}. The slot's value lives in a
 * {@link RuntimeState}, never in the module: `createRuntime()` makes a fresh state, the
 * top-level functions use {@link defaultState}, and `resetAll` clears every slot of a state in
 * one call, so a cache added later cannot escape a reset. The one exception is a slot defined
 * as `kept`, whose value names the runtime instead of caching anything (its key salt).
 */

import type { BackendLink } from "./backend.js";

/** A typed key naming one piece of runtime state and how to make it fresh. */
export interface Slot<T> {
  /** Human-readable name, used in tests and diagnostics. */
  readonly name: string;
  /** Builds the slot's initial value the first time a state is asked for it. */
  readonly create: () => T;
  /** Releases what the value holds (timers, sockets) before it is dropped. */
  readonly dispose?: ((value: T) => void) | undefined;
  /**
   * The value names the runtime rather than caching anything (its key-fingerprint secret), so
   * {@link clearState} keeps it: what the runtime exported before a reset still matches after.
   */
  readonly kept?: boolean | undefined;
}

/** How a slot behaves beyond making and disposing its value. */
export interface SlotOptions {
  /** Keep the value across {@link clearState}. @default false */
  readonly kept?: boolean | undefined;
}

/** Every cache and latch of one runtime, keyed by slot. */
export interface RuntimeState {
  /** The slot values created so far in this state. */
  readonly values: Map<Slot<unknown>, unknown>;
  /** The shared backend this state writes through to; absent for a state kept in memory only. */
  readonly link?: BackendLink | undefined;
}

/** Defines a slot: the key a module uses to keep one cache in a runtime state. */
export function defineSlot<T>(name: string, create: () => T, dispose?: (value: T) => void, options: SlotOptions = {}): Slot<T> {
  const slot: Slot<T> = dispose ? { name, create, dispose } : { name, create };
  return Object.freeze(options.kept === true ? { ...slot, kept: true } : slot);
}

/** Makes an empty runtime state, linked to a backend where one is given; slots are created on first use. */
export function createState(link?: BackendLink): RuntimeState {
  return link === undefined ? { values: new Map() } : { values: new Map(), link };
}

/** Returns the value of `slot` in `state`, creating it on first use. */
export function slotOf<T>(state: RuntimeState, slot: Slot<T>): T {
  const values = state.values as Map<Slot<T>, T>;
  if (values.has(slot)) return values.get(slot) as T;
  const value = slot.create();
  values.set(slot, value);
  return value;
}

/** Puts `value` in `slot` of `state`, in place of whatever it held (not disposed). */
export function setSlot<T>(state: RuntimeState, slot: Slot<T>, value: T): void {
  (state.values as Map<Slot<T>, T>).set(slot, value);
}

/** Names of the caches a state has created, in creation order; kept slots, which cache nothing, are left out. */
export function slotNames(state: RuntimeState): string[] {
  return [...state.values.keys()].filter((slot) => slot.kept !== true).map((slot) => slot.name);
}

/** Drops every slot value of `state` but the kept ones, disposing each first, so the next use starts fresh. */
export function clearState(state: RuntimeState): void {
  for (const [slot, value] of state.values) {
    if (slot.kept === true) continue;
    try {
      slot.dispose?.(value);
    } catch {
      // A dispose that fails must not keep the other caches alive.
    }
  }
  for (const slot of [...state.values.keys()]) if (slot.kept !== true) state.values.delete(slot);
}

/** The state behind the top-level functions (the default runtime). */
export const defaultState: RuntimeState = createState();
