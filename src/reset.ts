/**
 * @module reset
 * Dropping every cache and latch of the default runtime in one call.
 */

import { clearState, defaultState } from "./state/state.js";

/**
 * Drops every cache and latch the top-level functions use — client pool, endpoint and model
 * latches, served windows, calibration readings, the event bus, the hook and event settings —
 * so a teardown cannot forget one.
 *
 * Every cache lives in one registry, so one added later is cleared here too. Timers and pooled
 * sockets the caches held are released.
 */
export function resetAll(): void {
  clearState(defaultState);
}
