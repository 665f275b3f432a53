/**
 * @module text/safe-calls
 * Calls that never throw: handing a note or an event to a caller's callback, and writing a value
 * as JSON text. A callback that throws, or a value that cannot be written, must not cost the run
 * its work. This file imports nothing, so any module may use it.
 */

/**
 * Calls a caller's watcher with the given arguments, ignoring whatever it throws or rejects with.
 *
 * Nothing happens when no watcher is given. A promise the watcher returns is not awaited; its
 * rejection is caught so it never surfaces as an unhandled one.
 */
export function quietly(listener: ((...args: never[]) => unknown) | undefined, ...args: unknown[]): void {
  if (!listener) return;
  try {
    const result = (listener as (...values: unknown[]) => unknown)(...args);
    if (result && typeof (result as Promise<unknown>).then === "function") (result as Promise<unknown>).then(undefined, () => undefined);
  } catch {
    // A watcher that throws does not cost the run.
  }
}

/**
 * Hands a notice to a caller's `onNotice` sink, ignoring anything it throws.
 *
 * Anything that is not a function is skipped, so an options object read from untyped input
 * cannot make the call fail.
 */
export function notify(onNotice: unknown, message: string): void {
  try {
    if (typeof onNotice === "function") onNotice(message);
  } catch {
    // A notice sink that throws must not fail the work that had something to say.
  }
}

/**
 * Writes a value as JSON text for comparing two values, or "" where it cannot be written.
 *
 * A cycle, a BigInt or a throwing `toJSON` gives "", as does a value JSON has no text for
 * (undefined, a function).
 */
export function jsonKey(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return "";
  }
}
