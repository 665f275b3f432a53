/**
 * @module text/guards
 * Small checks on values of unknown shape, shared by every layer: whether a value is an object,
 * and whether it is a usable number. This file imports nothing, so any module may use it.
 */

/**
 * Whether a value is an object and not null; arrays count.
 *
 * Suits reading fields off parsed JSON where an array simply has none of the fields asked for.
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/**
 * Whether a value is an object that is neither null nor an array.
 *
 * Suits values that stand for a set of named fields (options, a JSON object, a schema).
 */
export function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Returns the value when it is a finite number, otherwise undefined. */
export function finiteNumber(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** Returns the value when it is a finite number above zero, otherwise undefined. */
export function positiveNumber(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}

/**
 * Returns a finite number of at least one rounded down to a whole number, otherwise undefined.
 *
 * A value between zero and one is refused rather than rounded down to zero.
 */
export function positiveInteger(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 1 ? Math.floor(value) : undefined;
}

/** Returns the value when it is a finite number of zero or more, otherwise undefined. */
export function nonNegativeNumber(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** A value as an input check quotes it: a string in quotes, cut at 80 characters, anything else by its type. */
export function quoteGiven(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 80 ? `${value.slice(0, 79)}…` : value);
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : typeof value === "function" ? "a function" : String(value);
}
