/**
 * @module wire/latch-link
 * The thread from an endpoint's latch record to the backend its runtime shares latches through.
 *
 * A negotiation holds only the record, not the runtime state, so a record made in a state with
 * a backend carries (under a symbol, not enumerable) the function that shares it; a record of a
 * state kept in memory carries nothing and sharing it does nothing.
 */

import type { BackendLink } from "../state/backend.js";

/** The key the sharing function sits under on a linked record. */
const SHARE: unique symbol = Symbol("agent-core.share-latches");

/** An endpoint record with where it came from, as the capabilities slot keeps it. */
interface LinkedEntry {
  readonly baseUrl: string;
  readonly keyHash: string;
  readonly supports: object;
}

/** Gives an endpoint's record the function that shares its latches through `link`. @internal */
export function linkRecord(entry: LinkedEntry, link: BackendLink): void {
  Object.defineProperty(entry.supports, SHARE, { value: () => link.share(entry), enumerable: false, configurable: true });
}

/**
 * Shares whatever the record latched that its runtime has not shared yet, where the record
 * belongs to a runtime on a backend; never throws.
 * @internal
 */
export function shareLatches(supports: unknown): void {
  try {
    if (typeof supports !== "object" || supports === null) return;
    const share = (supports as { [SHARE]?: unknown })[SHARE];
    if (typeof share === "function") share();
  } catch {
    // Sharing is best effort: a request never fails because its latches could not be shared.
  }
}
