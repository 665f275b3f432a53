/**
 * @module capabilities
 * What an endpoint turned out not to take, and under it what one model on that endpoint did not;
 * the loop that re-sends a request without the refused thing, `negotiate`, sits beside it in
 * wire/negotiate.
 *
 * Two records hold the latches. An endpoint's record ({@link capabilitiesFor}) says whether the
 * server takes strict tool schemas and `stream_options`, and whether it holds answers to a grammar
 * built from the schema; it is keyed by the base URL and the API
 * key together, since a router may send two keys to two backends. A model's record
 * ({@link modelCapabilitiesFor}) hangs off its endpoint's under the name the endpoint knows the
 * model by, and says how the model takes its reply ceiling, its temperature, structured output,
 * a reasoning effort, a prefilled assistant message and the extra fields it refused.
 */

import { normaliseBaseUrl } from "./base-url.js";
import { EFFORT_LADDER } from "./refusal.js";
import { linkRecord } from "./latch-link.js";
import { keyFingerprintIn } from "./key-fingerprint.js";
import { capabilityBoundsIn, makeRoom, touchEntry, type BoundsState } from "./capability-bounds.js";
import { defaultState, defineSlot, slotOf, type RuntimeState } from "../state/state.js";
import type { ReplayField } from "./reasoning-replay.js";
import { shapingSnapshotOf } from "./message-shaping.js";

export { EFFORT_LADDER } from "./refusal.js";
export type { ReplayField } from "./reasoning-replay.js";

/** What one model on one endpoint takes; every flag starts true and is latched false by a refusal. */
export interface ModelCapabilities {
  /** The reply ceiling is sent as `max_tokens`; false once the model asked for `max_completion_tokens`. */
  legacyTokenLimit: boolean;
  /** A temperature may be sent; false once the model refused any but its own. */
  chosenTemperature: boolean;
  /** A `response_format` of type json_schema may be sent; false once the model refused the field. */
  structuredOutput: boolean;
  /** The model carries on a trailing assistant message; false once a continuation showed it does not. */
  assistantPrefill: boolean;
  /** A `reasoning_effort` may be sent at all; false for a model that takes none. */
  reasoningEffort: boolean;
  /** Rungs of {@link EFFORT_LADDER} this model refused, which the next request steps over. */
  refusedEfforts: string[];
  /** Top-level request fields this model refused and that were offered as droppable. */
  droppedFields: string[];
  /**
   * Top-level fields this model refused only beside tools (`reasoning_effort` on OpenAI's chat
   * completions for gpt-5.x), left out of a request that declares tools and sent in one that
   * declares none. Made on the first such refusal. @default []
   */
  droppedWithTools?: string[] | undefined;
  /**
   * Top-level fields this model refused only without tools (`parallel_tool_calls`), left out of a
   * request that declares none and sent beside tools. Made on the first such refusal. @default []
   */
  droppedWithoutTools?: string[] | undefined;
  /**
   * The reasoning effort sent beside tools in place of any other, where the model said it takes
   * tools only at that one ("none"); "" or absent where nothing replaces it. @default ""
   */
  effortWithTools?: string | undefined;
  /** The field reasoning is sent back under, as a refusal taught it; "" where nothing was learned. */
  replayField: ReplayField | "";
  /** Every assistant turn carries the reasoning field while tools are declared; true once the model asked for it back. */
  replayEveryTurn: boolean;
  /** A tool-call turn's text is folded into its reasoning; true once the model's template refused both side by side. */
  replayFoldContent: boolean;
  /** Every system message is sent folded into one at the top; true once the template refused a later one. @default false */
  foldSystem?: boolean;
  /** Tool-call ids are sent rewritten to this many letters and digits, once the server stated that rule. @default 0 (as they are) */
  toolCallIdLength?: number;
  /** Tools are described in the system prompt, not declared; true once the server refused tools as such. @default false */
  toolsInPrompt?: boolean;
  /** Provider fields (kept from a stream) this model refused on a message or a call, left out from then on. @default [] */
  droppedMessageFields?: string[];
}

/** What one endpoint (a base URL and an API key) takes, with its models' records under it. */
export interface EndpointCapabilities {
  /**
   * Tool schemas may be sent strict; false once the server could not take them, and false on a
   * grammar-constrained server, where the relaxed schema is the one its grammar enforces.
   */
  strictSchemas: boolean;
  /** `stream_options: { include_usage: true }` may be sent; false once the server refused it. */
  usageInStream: boolean;
  /**
   * The server holds tool arguments and json_schema answers to a grammar it builds from the
   * schema it is sent (llama.cpp, vLLM, LM Studio), as its model listing says.
   *
   * Such a server takes `strict: true` and ignores it, so the strict rewrite, which moves
   * length bounds, `default` and unsupported formats into descriptions, is what its grammar would
   * enforce. Learned from the listing (listModels, and before the first loop step or askJson that
   * carries a schema); strictSchemas is turned false with it, so every body builder that picks on
   * strictSchemas sends the relaxed schemas, whose bounds the grammar keeps.
   */
  grammarConstrained: boolean;
  /** The records of the models asked for on this endpoint, by the name the endpoint knows them by. */
  readonly models: Map<string, ModelCapabilities>;
  /**
   * The message field the server reads reasoning back from, where its listing says
   * (`reasoning` for vLLM); absent sends `reasoning_content`. A model's own latch wins.
   */
  reasoningField?: ReplayField | undefined;
}

/** An endpoint record with where it came from, as the state keeps it. @internal */
export interface EndpointEntry {
  /** The normalised base URL. */
  readonly baseUrl: string;
  /** A hash of the API key ("" for none), never the key itself. */
  readonly keyHash: string;
  /** The record. */
  readonly supports: EndpointCapabilities;
}

const ENDPOINTS = defineSlot("capabilities", () => new Map<string, EndpointEntry>());

/** Makes the record a model starts with: everything allowed. @internal */
export function freshModelCapabilities(): ModelCapabilities {
  return {
    legacyTokenLimit: true,
    chosenTemperature: true,
    structuredOutput: true,
    assistantPrefill: true,
    reasoningEffort: true,
    refusedEfforts: [],
    droppedFields: [],
    replayField: "",
    replayEveryTurn: false,
    replayFoldContent: false,
  };
}

/** Makes the record an endpoint starts with: everything allowed, not known to be grammar-constrained, no models yet. @internal */
export function freshEndpointCapabilities(): EndpointCapabilities {
  return { strictSchemas: true, usageInStream: true, grammarConstrained: false, models: new Map() };
}

/**
 * Fingerprints an API key for keying and for snapshots: "" for an absent or empty key, otherwise
 * `hmac:`, the runtime's key-salt id and 32 hex digits of HMAC-SHA-256 under its key salt.
 * @internal
 */
export function hashApiKey(apiKey: string | undefined | null, state: RuntimeState = defaultState): string {
  return keyFingerprintIn(state, apiKey);
}

/** The bounds an endpoint record's model map is held to, under a symbol so it is not enumerable. */
const MODEL_BOUNDS: unique symbol = Symbol("agent-core.model-bounds");

/** Whether a model record moved away from a fresh one. */
function modelHoldsLatch(record: ModelCapabilities): boolean {
  const fresh = freshModelCapabilities();
  return (
    (Object.keys(fresh) as (keyof ModelCapabilities)[]).some((field) => {
      const value = record[field];
      return Array.isArray(value) ? value.length > 0 : value !== fresh[field];
    }) || Object.keys(shapingSnapshotOf(record)).length > 0
  );
}

/** Whether an endpoint record, or any model record under it, latched something. */
function endpointHoldsLatch(entry: EndpointEntry): boolean {
  const { supports } = entry;
  if (!supports.strictSchemas || !supports.usageInStream || supports.grammarConstrained) return true;
  for (const record of supports.models.values()) if (modelHoldsLatch(record)) return true;
  return false;
}

/** The state's endpoint records by key. @internal */
export function endpointEntriesIn(state: RuntimeState): Map<string, EndpointEntry> {
  return slotOf(state, ENDPOINTS);
}

/** Finds or makes the record for a normalised base URL and key hash. @internal */
export function endpointRecordIn(state: RuntimeState, baseUrl: string, keyHash: string): EndpointCapabilities {
  const entries = slotOf(state, ENDPOINTS);
  const key = `${baseUrl}\u0000${keyHash}`;
  let entry = entries.get(key);
  if (entry) {
    touchEntry(entries, key, entry);
    return entry.supports;
  }
  const bounded = capabilityBoundsIn(state);
  bounded.evictedEndpoints += makeRoom(entries, bounded.bounds.maxEndpoints, endpointHoldsLatch);
  entry = { baseUrl, keyHash, supports: freshEndpointCapabilities() };
  Object.defineProperty(entry.supports, MODEL_BOUNDS, { value: bounded, enumerable: false, configurable: true });
  entries.set(key, entry);
  if (state.link !== undefined) linkRecord(entry, state.link);
  return entry.supports;
}

/** {@link capabilitiesFor} on an explicit runtime state. @internal */
export function capabilitiesForIn(state: RuntimeState, baseUrl: string, apiKey?: string): EndpointCapabilities {
  return endpointRecordIn(state, normaliseBaseUrl(typeof baseUrl === "string" ? baseUrl : ""), hashApiKey(apiKey, state));
}

/**
 * Returns the endpoint's latch record, made on first use with strictSchemas and usageInStream true.
 *
 * grammarConstrained starts false; reading the endpoint's listing (listModels, and the first loop
 * step or askJson that carries a schema) sets it, with strictSchemas false, for llama.cpp, vLLM
 * and LM Studio.
 *
 * The record is keyed by the normalised base URL and the API key together: an absent and an empty
 * key are one entry, and two keys on one base URL latch separately. The same object comes back
 * on every call, so a latch flipped by `negotiate` is seen by every later request.
 *
 * @param baseUrl - The endpoint's base URL.
 * @param apiKey - The key the endpoint is called with; absent and "" are the same.
 */
export function capabilitiesFor(baseUrl: string, apiKey?: string): EndpointCapabilities {
  return capabilitiesForIn(defaultState, baseUrl, apiKey);
}

/**
 * Returns a model's record under an endpoint record, making it on first use.
 *
 * Works on any object shaped like an endpoint record, giving it a model map where it has none.
 * @internal
 */
export function modelCapabilitiesOf(supports: EndpointCapabilities, model: string): ModelCapabilities {
  let models = supports.models as Map<string, ModelCapabilities> | undefined;
  if (!(models instanceof Map)) {
    models = new Map();
    Object.defineProperty(supports, "models", { value: models, enumerable: false, configurable: true });
  }
  let record = models.get(model);
  if (record) {
    touchEntry(models, model, record);
    return record;
  }
  const bounded = (supports as { [MODEL_BOUNDS]?: BoundsState })[MODEL_BOUNDS];
  if (bounded !== undefined) bounded.evictedModels += makeRoom(models, bounded.bounds.maxModelsPerEndpoint, modelHoldsLatch);
  record = freshModelCapabilities();
  models.set(model, record);
  return record;
}

/** {@link modelCapabilitiesFor} on an explicit runtime state. @internal */
export function modelCapabilitiesForIn(state: RuntimeState, baseUrl: string, apiKey: string | undefined, model: string): ModelCapabilities {
  return modelCapabilitiesOf(capabilitiesForIn(state, baseUrl, apiKey), model);
}

/**
 * Returns the latch record of one model on one endpoint, made on first use with every flag true
 * and nothing refused.
 *
 * It hangs off the endpoint's record under the model's name as the endpoint knows it, so gpt-4o
 * at one provider and gpt-4o behind a proxy are two records, and a model that refused something
 * does not speak for another model on the same key.
 */
export function modelCapabilitiesFor(baseUrl: string, apiKey: string | undefined, model: string): ModelCapabilities {
  return modelCapabilitiesForIn(defaultState, baseUrl, apiKey, model);
}

/**
 * Returns the reasoning effort to send a model: "" for none, otherwise the asked value moved up
 * past any rung the model refused.
 *
 * The empty string comes back for an absent record, an absent or "off" setting, and a model that
 * takes no effort at all. A value off {@link EFFORT_LADDER} ("xhigh") is sent as asked. Where
 * every rung from the asked one up was refused, the top rung is sent and its refusal reaches the
 * caller.
 *
 * @param model - The model's record, as negotiate hands it to the send callback.
 * @param asked - The configured effort.
 */
export function effortFor(model: ModelCapabilities | undefined, asked: string | undefined | null): string {
  if (!model || typeof asked !== "string") return "";
  const value = asked.trim();
  if (value === "" || value.toLowerCase() === "off") return "";
  if (model.reasoningEffort === false) return "";
  let index = EFFORT_LADDER.indexOf(value.toLowerCase());
  if (index < 0) return value;
  const refused = Array.isArray(model.refusedEfforts) ? model.refusedEfforts : [];
  while (index < EFFORT_LADDER.length - 1 && refused.includes(EFFORT_LADDER[index] as string)) index += 1;
  return EFFORT_LADDER[index] as string;
}
