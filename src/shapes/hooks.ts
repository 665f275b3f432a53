/**
 * @module shapes/hooks
 * The lifecycle points a hook can run at: the one list the hook runner and the agent document's
 * reader both check against.
 */

/** A point in a session at which a host runs hooks. */
export type HookEventName = "sessionStart" | "beforeTurn" | "afterTurn" | "beforeCompact" | "sessionEnd" | "sessionDelete";

/** Every hook event, in the order a session meets them. */
export const HOOK_EVENTS: readonly HookEventName[] = Object.freeze(["sessionStart", "beforeTurn", "afterTurn", "beforeCompact", "sessionEnd", "sessionDelete"]);
