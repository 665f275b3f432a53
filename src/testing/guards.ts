/**
 * @module testing/guards
 * The loopback endpoint's one check on values of unknown shape: whether a value read off a
 * request body is a JSON object. It imports nothing, so every file of the endpoint may use it.
 */

/** Whether a value is an object that is neither null nor an array. @internal */
export function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
