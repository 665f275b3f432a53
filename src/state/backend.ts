/**
 * @module state/backend
 * What a store shared by several replicas offers a runtime: the run events it keeps and replays,
 * and the learned latches it holds and broadcasts.
 *
 * A runtime created on a backend (`createRuntime({ backend })`) still keeps every cache of its
 * own and answers every read from it; the backend is told what to store and tells the runtime
 * what the other replicas stored. Every method is called synchronously from the library's hot
 * paths (an `emit`, a negotiation's next attempt), so none may block or throw: a backend queues
 * the work, does it in the background and reports its own failures some other way.
 */

import type { EventSettings, RunEvent } from "../shapes/event-types.js";

/** Hears the events of one run a backend follows, in the order the backend stored them. */
export interface RunFollower {
  /**
   * Takes the next events of the run, oldest first; a `seq` that jumps says events were lost
   * there (trimmed past the cap, or never stored).
   */
  events(batch: readonly RunEvent[]): void;
  /** The run was ended (`endRun`), or the backend closed: nothing more will come. */
  ended(): void;
}

/**
 * Learned latches as a backend shares them: the capabilities snapshot's own format (its
 * `version` and endpoint entries, API keys only as a hash), usually a few entries at a time.
 */
export interface SharedLatches {
  /** The snapshot format's version the entries are written in. */
  readonly version: number;
  /** Endpoint entries, each with its base URL and key hash; read as `importCapabilities` reads them. */
  readonly endpoints: readonly object[];
}

/**
 * A store several replicas of a host share, for the run events and the learned latches; the
 * `./redis` entry's `createRedisBackend` makes one.
 *
 * Events: every event a runtime emits is handed to {@link RuntimeBackend.appendEvents} in order,
 * and a watch for a run this replica does not hold goes through {@link RuntimeBackend.followRun},
 * which replays the run from the start and follows it. Latches: what a runtime learns is handed
 * to {@link RuntimeBackend.publishLatches}; what the others learned arrives through the listener
 * given to {@link RuntimeBackend.onLatches}, and {@link RuntimeBackend.loadLatches} is read once
 * when the runtime is created. Every method is synchronous and must not throw.
 */
export interface RuntimeBackend {
  /**
   * Stores a run's newly stamped events, in the order given, after any handed over before;
   * `settings` is the bus's cap and retention, read at once.
   */
  appendEvents(runId: string, events: readonly RunEvent[], settings: Readonly<EventSettings>): void;
  /** Ends a run for its watchers on every replica (`endRun`), keeping it for `settings.retainMs`. */
  endRun(runId: string, settings: Readonly<EventSettings>): void;
  /**
   * Hands `follower` the run's stored events after seq `after`, then each new one, until the
   * run's `done`, its end or the returned function is called (which stops the following).
   */
  followRun(runId: string, after: number, follower: RunFollower): () => void;
  /**
   * The key salt the replicas on this backend fingerprint API keys with, which a runtime created
   * on it takes unless given its own `keySalt`; absent where the backend leaves each runtime its own.
   */
  readonly keySalt?: string | undefined;
  /** Stores latches this replica learned and tells the other replicas of them. */
  publishLatches(latches: SharedLatches): void;
  /** Every latch the backend holds, as a starting replica loads them. */
  loadLatches(): SharedLatches;
  /** Calls `listener` with the latches other replicas publish; the returned function stops it. */
  onLatches(listener: (latches: SharedLatches) => void): () => void;
}

/**
 * How one runtime state reaches the backend it was created on.
 * @internal
 */
export interface BackendLink {
  /** The backend. */
  readonly backend: RuntimeBackend;
  /** Shares whatever one endpoint record latched that this state has not shared yet. */
  readonly share: (entry: { readonly baseUrl: string; readonly keyHash: string; readonly supports: object }) => void;
  /** Loads the backend's latches into the state again, after a reset dropped them. */
  readonly reload: () => void;
  /** The watchers following runs through the backend, ended when the bus is. */
  readonly followers: Set<{ close(): void }>;
}
