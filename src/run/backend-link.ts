/**
 * @module run/backend-link
 * A runtime state on a shared backend: made with the backend's latches loaded, kept in step
 * with what the other replicas publish, and reset without losing either.
 */

import { closeFollowersIn } from "./event-follow.js";
import type { BackendLink, RuntimeBackend } from "../state/backend.js";
import { clearState, createState, type RuntimeState } from "../state/state.js";
import { receiveLatchesIn, shareEntryIn } from "../wire/latch-share.js";
import type { EndpointEntry } from "../wire/capabilities.js";

const METHODS = ["appendEvents", "endRun", "followRun", "publishLatches", "loadLatches", "onLatches"] as const;

/**
 * Makes a runtime state on `backend`: its latches loaded from the backend before anything can
 * send a request, and every latch another replica publishes applied as it arrives.
 * @internal
 */
export function createStateOn(backend: RuntimeBackend): RuntimeState {
  const missing = METHODS.filter((name) => typeof (backend as unknown as Record<string, unknown> | null)?.[name] !== "function");
  if (missing.length > 0) {
    throw new TypeError(`createRuntime's backend must be a RuntimeBackend, as createRedisBackend makes; it lacks ${missing.join(", ")}.`);
  }
  // The latch facts this state shared or received; kept across a reset, since the backend keeps them.
  const known = new Set<string>();
  const link: BackendLink = {
    backend,
    share: (entry) => shareEntryIn(state, known, entry as EndpointEntry),
    reload: () => {
      try {
        receiveLatchesIn(state, known, backend.loadLatches());
      } catch {
        // A backend that cannot say what it holds leaves the state to learn on its own.
      }
    },
    followers: new Set(),
  };
  const state = createState(link);
  link.reload();
  backend.onLatches((latches) => receiveLatchesIn(state, known, latches));
  return state;
}

/**
 * Drops every cache of a state; one on a backend also ends its followed watchers and loads the
 * shared latches again, so the replica does not learn them over.
 * @internal
 */
export function resetStateIn(state: RuntimeState): void {
  closeFollowersIn(state);
  clearState(state);
  state.link?.reload();
}
