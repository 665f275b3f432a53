/**
 * @module runtime
 * Isolated sets of every cache, with the functions that use them as methods.
 *
 * The top-level functions of this package share one runtime, `defaultRuntime`. A host whose
 * tenants must not share a client pool, a capability latch, a served-window cache, calibration
 * readings, an event bus or hook settings creates one runtime per tenant; each method is the
 * top-level function of the same name, bound to that runtime's own state.
 */

import { type resumeAgentLoop, resumeAgentLoopIn, type runAgentLoop, runAgentLoopIn } from "./run/agent-loop.js";
import { type calibrate, calibrateIn, type charsPerTokenFor, charsPerTokenForIn } from "./wire/calibration.js";
import { type capabilitiesFor, capabilitiesForIn, type modelCapabilitiesFor, modelCapabilitiesForIn } from "./wire/capabilities.js";
import {
  type contextLimitFor,
  contextLimitForIn,
  type getClient,
  getClientIn,
  type listModels,
  listModelsIn,
  type servedWindow,
  servedWindowIn,
} from "./wire/client.js";
import {
  type configureEvents,
  configureEventsIn,
  type emit,
  emitIn,
  type endRun,
  endRunIn,
  type history,
  historyIn,
  type resetEvents,
  resetEventsIn,
  type watch,
  watchIn,
} from "./run/events.js";
import {
  type assembleContext,
  assembleContextIn,
  type configureHooks,
  configureHooksIn,
  type gather,
  gatherIn,
  type resetHooks,
  resetHooksIn,
  type withContext,
  withContextIn,
} from "./run/hooks.js";
import { createState, defaultState, slotNames, type RuntimeState } from "./state/state.js";
import type { RuntimeBackend } from "./state/backend.js";

export type { RuntimeBackend, RunFollower, SharedLatches } from "./state/backend.js";
import { createStateOn, resetStateIn } from "./run/backend-link.js";
import { type preselect, type preselectByKeywords, preselectByKeywordsIn, preselectIn } from "./run/preselect.js";
import { type runTurn, runTurnIn } from "./turn/run-turn.js";
import { type ask, askIn, type askJson, askJsonIn, type askReply, askReplyIn, type summariser, summariserIn } from "./turn/side-task.js";
import { type exportCapabilities, exportCapabilitiesIn, type importCapabilities, importCapabilitiesIn } from "./wire/snapshot.js";
import { type configureKeySalt, configureKeySaltIn } from "./wire/key-fingerprint.js";
import { type configureCapabilities, configureCapabilitiesIn } from "./wire/capability-bounds.js";

/** One isolated set of caches and latches, with every function that reads them bound to it. */
export interface Runtime {
  /** A pooled OpenAI client for an endpoint, from this runtime's pool. */
  readonly getClient: typeof getClient;
  /** The endpoint's model listing, bounded and abortable. */
  readonly listModels: typeof listModels;
  /** The window the server is actually serving, from its own API. */
  readonly servedWindow: typeof servedWindow;
  /** The context window to size a request against, from this runtime's caches. */
  readonly contextLimitFor: typeof contextLimitFor;
  /** The endpoint's refusal latches in this runtime. */
  readonly capabilitiesFor: typeof capabilitiesFor;
  /** One model's refusal latches on an endpoint in this runtime. */
  readonly modelCapabilitiesFor: typeof modelCapabilitiesFor;
  /** Records one characters-per-token reading in this runtime. */
  readonly calibrate: typeof calibrate;
  /** The calibrated divisor for a model in this runtime. */
  readonly charsPerTokenFor: typeof charsPerTokenFor;
  /** This runtime's latches as a JSON blob. */
  readonly exportCapabilities: typeof exportCapabilities;
  /** Loads a blob of latches into this runtime. */
  readonly importCapabilities: typeof importCapabilities;
  /** Sets the secret this runtime fingerprints API keys with. */
  readonly configureKeySalt: typeof configureKeySalt;
  /** Moves how many endpoint and model records this runtime's latch state holds. */
  readonly configureCapabilities: typeof configureCapabilities;
  /** One negotiated, retried, guarded turn, calibrating this runtime. */
  readonly runTurn: typeof runTurn;
  /** Emits an event on this runtime's bus. */
  readonly emit: typeof emit;
  /** Watches a run on this runtime's bus. */
  readonly watch: typeof watch;
  /** What a run has emitted on this runtime's bus. */
  readonly history: typeof history;
  /** Drops a finished run's buffer from this runtime's bus. */
  readonly endRun: typeof endRun;
  /** Moves this runtime's event-bus settings. */
  readonly configureEvents: typeof configureEvents;
  /** Puts this runtime's event-bus settings back and empties its bus. */
  readonly resetEvents: typeof resetEvents;
  /** Moves this runtime's hook budget and preface. */
  readonly configureHooks: typeof configureHooks;
  /** Puts this runtime's hook settings back. */
  readonly resetHooks: typeof resetHooks;
  /** Joins hook outcomes into context under this runtime's budget. */
  readonly assembleContext: typeof assembleContext;
  /** Runs injecting hooks under this runtime's budget. */
  readonly gather: typeof gather;
  /** Puts hook context on a question under this runtime's preface. */
  readonly withContext: typeof withContext;
  /** A one-shot side task through this runtime's pool and latches. */
  readonly ask: typeof ask;
  /** A one-shot side task with its finish reason. */
  readonly askReply: typeof askReply;
  /** A one-shot side task answering JSON to a schema. */
  readonly askJson: typeof askJson;
  /** A compaction summariser through this runtime. */
  readonly summariser: typeof summariser;
  /** Chooses a run's tools through this runtime. */
  readonly preselect: typeof preselect;
  /** Ranks a catalogue against a request with this runtime's index cache. */
  readonly preselectByKeywords: typeof preselectByKeywords;
  /** Runs the agent loop with every cache and the bus of this runtime. */
  readonly runAgentLoop: typeof runAgentLoop;
  /** Continues a run awaiting approval with every cache of this runtime, whichever runtime or process paused it. */
  readonly resumeAgentLoop: typeof resumeAgentLoop;
  /** Drops every cache and latch of this runtime, releasing its sockets and timers. */
  readonly reset: () => void;
  /** Names of the caches this runtime has created so far, for diagnostics. */
  readonly caches: () => string[];
}

/** Binds a state-taking implementation to one state, keeping the public function's type. */
function bind<F>(state: RuntimeState, implementation: (state: RuntimeState, ...args: never[]) => unknown): F {
  return ((...args: never[]) => implementation(state, ...args)) as F;
}

function runtimeOver(state: RuntimeState): Runtime {
  return Object.freeze({
    getClient: bind<typeof getClient>(state, getClientIn),
    listModels: bind<typeof listModels>(state, listModelsIn),
    servedWindow: bind<typeof servedWindow>(state, servedWindowIn),
    contextLimitFor: bind<typeof contextLimitFor>(state, contextLimitForIn),
    capabilitiesFor: bind<typeof capabilitiesFor>(state, capabilitiesForIn),
    modelCapabilitiesFor: bind<typeof modelCapabilitiesFor>(state, modelCapabilitiesForIn),
    calibrate: bind<typeof calibrate>(state, calibrateIn),
    charsPerTokenFor: bind<typeof charsPerTokenFor>(state, charsPerTokenForIn),
    exportCapabilities: bind<typeof exportCapabilities>(state, exportCapabilitiesIn),
    importCapabilities: bind<typeof importCapabilities>(state, importCapabilitiesIn),
    configureKeySalt: bind<typeof configureKeySalt>(state, configureKeySaltIn),
    configureCapabilities: bind<typeof configureCapabilities>(state, configureCapabilitiesIn),
    runTurn: bind<typeof runTurn>(state, runTurnIn),
    emit: bind<typeof emit>(state, emitIn),
    watch: bind<typeof watch>(state, watchIn),
    history: bind<typeof history>(state, historyIn),
    endRun: bind<typeof endRun>(state, endRunIn),
    configureEvents: bind<typeof configureEvents>(state, configureEventsIn),
    resetEvents: bind<typeof resetEvents>(state, resetEventsIn),
    configureHooks: bind<typeof configureHooks>(state, configureHooksIn),
    resetHooks: bind<typeof resetHooks>(state, resetHooksIn),
    assembleContext: bind<typeof assembleContext>(state, assembleContextIn),
    gather: bind<typeof gather>(state, gatherIn),
    withContext: bind<typeof withContext>(state, withContextIn),
    ask: bind<typeof ask>(state, askIn),
    askReply: bind<typeof askReply>(state, askReplyIn),
    askJson: bind<typeof askJson>(state, askJsonIn),
    summariser: bind<typeof summariser>(state, summariserIn),
    preselect: bind<typeof preselect>(state, preselectIn),
    preselectByKeywords: bind<typeof preselectByKeywords>(state, preselectByKeywordsIn),
    runAgentLoop: bind<typeof runAgentLoop>(state, runAgentLoopIn),
    resumeAgentLoop: bind<typeof resumeAgentLoop>(state, resumeAgentLoopIn),
    reset: () => resetStateIn(state),
    caches: () => slotNames(state),
  });
}

/** Options for {@link createRuntime}. */
export interface RuntimeOptions {
  /**
   * A store shared with other replicas of the host (the `./redis` entry's `createRedisBackend`
   * makes one): the runtime writes its run events and learned latches through to it, watches a
   * run another replica holds through it, and starts with the latches it holds.
   * @default none: everything stays in this process
   */
  backend?: RuntimeBackend | undefined;
  /**
   * The secret API keys are fingerprinted with (an HMAC-SHA-256 key) in latch records, snapshots
   * and the backend's shared latches. Replicas that share a snapshot or a backend must be given
   * the same one, as must a process that imports its own snapshot after a restart; a long random
   * string, kept like any credential. It outlives `reset`.
   * @default the backend's `keySalt` where it has one (a Redis backend agrees one with its replicas), else 32 random bytes drawn for this runtime
   */
  keySalt?: string | undefined;
}

/**
 * Creates a runtime with its own client pool, latches, served windows, calibration readings,
 * event bus and hook settings, sharing nothing with any other.
 *
 * With a `backend`, the caches stay this runtime's own and every read is still answered from
 * them, but each emitted event is also stored in the backend, `watch` of a run this replica does
 * not hold reads it from there (replayed from the start, then followed until `done`), each latch
 * learned is published to the other replicas and theirs are applied here as they arrive. `reset`
 * then loads the shared latches again.
 *
 * @example
 * const tenant = createRuntime();
 * const supports = tenant.capabilitiesFor(config.baseUrl, config.apiKey);
 * const result = await tenant.runAgentLoop({ config, messages, tools, dispatch });
 * tenant.reset(); // when the tenant goes away
 */
export function createRuntime(options: RuntimeOptions = {}): Runtime {
  const backend = options?.backend;
  const keySalt = options?.keySalt ?? backend?.keySalt;
  if (keySalt !== undefined && (typeof keySalt !== "string" || keySalt === "")) {
    throw new TypeError("createRuntime's keySalt must be a non-empty string, the same on every replica that shares snapshots or a backend.");
  }
  const state = backend === undefined ? createState() : createStateOn(backend);
  // Latches loaded from the backend carry their fingerprints as text, so setting the salt after loading them changes none.
  if (keySalt !== undefined) configureKeySaltIn(state, keySalt);
  return runtimeOver(state);
}

/** The runtime behind the top-level functions: calling `defaultRuntime.emit` is calling `emit`. */
export const defaultRuntime: Runtime = runtimeOver(defaultState);
