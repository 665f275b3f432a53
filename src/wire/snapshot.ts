/**
 * @module snapshot
 * The latched refusals as a JSON blob a host stores, so a restarted process sends the lesser
 * request first time instead of learning each refusal again.
 *
 * An endpoint is written as its normalised base URL and a keyed fingerprint of its API key
 * (`hmac:`, the runtime's key-salt id and 32 hex digits of HMAC-SHA-256 under its key salt; ""
 * for no key): the blob can be stored beside settings without holding a credential or letting
 * anyone confirm a guessed key, and it still tells two keys on one base URL apart. Calibration
 * readings are not part of it; they are measurements that move every turn, not refusals.
 *
 * Sharing a snapshot between replicas, or across restarts, needs the same key salt on each
 * (`createRuntime({ keySalt })`, `configureKeySalt`): the salt is random per runtime otherwise,
 * and an entry fingerprinted under another salt is left out and listed in `ignored`, as is an
 * unkeyed `sha256:` entry from an earlier version. Keyless entries always import. The records an
 * import makes count against the runtime's capability bounds (`configureCapabilities`).
 */

import { EFFORT_LADDER, endpointEntriesIn, endpointRecordIn, freshModelCapabilities, modelCapabilitiesOf, type ModelCapabilities } from "./capabilities.js";
import { normaliseBaseUrl } from "./base-url.js";
import { capabilityBoundsIn } from "./capability-bounds.js";
import { unmatchableKeyReason } from "./key-fingerprint.js";
import { defaultState, type RuntimeState } from "../state/state.js";
import { isPlainRecord } from "../text/guards.js";
import { importReplay, REPLAY_FIELDS, REPLAY_SNAPSHOT_KEYS, replaySnapshotOf, type ReplayField } from "./reasoning-replay.js";
import { importShaping, SHAPING_SNAPSHOT_KEYS, shapingSnapshotOf, type ShapingSnapshot } from "./message-shaping.js";

/** The snapshot format's version; a blob of another version is ignored whole. */
export const CAPABILITIES_SNAPSHOT_VERSION = 1;

/**
 * One model's latches as stored: only what differs from a fresh record; the message-shape
 * latches (`foldSystem`, `toolCallIdLength`, `toolsInPrompt`, `droppedMessageFields`) among them.
 */
export interface ModelSnapshot extends ShapingSnapshot {
  legacyTokenLimit?: boolean | undefined;
  chosenTemperature?: boolean | undefined;
  structuredOutput?: boolean | undefined;
  assistantPrefill?: boolean | undefined;
  reasoningEffort?: boolean | undefined;
  refusedEfforts?: string[] | undefined;
  droppedFields?: string[] | undefined;
  /** Fields refused only beside tools; a blob without it imports as none. */
  droppedWithTools?: string[] | undefined;
  /** Fields refused only without tools; a blob without it imports as none. */
  droppedWithoutTools?: string[] | undefined;
  /** The effort sent beside tools in place of any other, a rung of the effort ladder. */
  effortWithTools?: string | undefined;
  /** The field reasoning is sent back under, as a refusal taught it. */
  replayField?: ReplayField | undefined;
  /** True where every assistant turn carries the reasoning field while tools are declared. */
  replayEveryTurn?: boolean | undefined;
  /** True where a tool-call turn's text is folded into its reasoning. */
  replayFoldContent?: boolean | undefined;
}

/** One endpoint's latches as stored. */
export interface EndpointSnapshot {
  /** The normalised base URL. */
  baseUrl: string;
  /** `hmac:`, the key-salt id and 32 hex digits of the API key's HMAC-SHA-256, or "" for none; never the key. */
  key: string;
  strictSchemas?: boolean | undefined;
  usageInStream?: boolean | undefined;
  /** True where the server holds answers to a grammar built from the schema; importing it sends relaxed schemas. */
  grammarConstrained?: boolean | undefined;
  /** The field the endpoint reads reasoning back from, where its listing said (`reasoning` for vLLM). */
  reasoningField?: ReplayField | undefined;
  /** The models that latched something, by name. */
  models?: Record<string, ModelSnapshot> | undefined;
}

/** Every latch of a runtime, as JSON-able data. */
export interface CapabilitiesSnapshot {
  version: typeof CAPABILITIES_SNAPSHOT_VERSION;
  endpoints: EndpointSnapshot[];
}

/** What {@link importCapabilities} took from a blob and what it left out. */
export interface ImportCapabilitiesResult {
  /** Endpoint entries applied. */
  endpoints: number;
  /** Model entries applied. */
  models: number;
  /** Where each ignored part was, with why (`endpoints[2]: key is not a hash`). */
  ignored: string[];
}

const FLAGS = ["legacyTokenLimit", "chosenTemperature", "structuredOutput", "assistantPrefill", "reasoningEffort"] as const;
const MAX_ENTRIES = 10_000;
const FIELD_NAME = /^[A-Za-z_][\w.-]{0,199}$/;
/** The lists of fields refused only in one company (beside tools, or without them). */
const COMBINATION_LISTS = ["droppedWithTools", "droppedWithoutTools"] as const;
const COMBINATION_KEYS: readonly string[] = [...COMBINATION_LISTS, "effortWithTools"];
/** Fields a request owns, which no stored latch may leave out. */
const OWNED_FIELDS: ReadonlySet<string> = new Set(["model", "messages", "stream", "tools"]);

function modelSnapshot(record: ModelCapabilities): ModelSnapshot | undefined {
  const fresh = freshModelCapabilities();
  const out: ModelSnapshot = {};
  for (const flag of FLAGS) if (record[flag] !== fresh[flag]) out[flag] = record[flag];
  if (record.refusedEfforts.length > 0) out.refusedEfforts = [...record.refusedEfforts];
  if (record.droppedFields.length > 0) out.droppedFields = [...record.droppedFields];
  for (const list of COMBINATION_LISTS) {
    const value = record[list];
    if (Array.isArray(value) && value.length > 0) out[list] = [...value];
  }
  if (typeof record.effortWithTools === "string" && record.effortWithTools !== "") out.effortWithTools = record.effortWithTools;
  Object.assign(out, replaySnapshotOf(record), shapingSnapshotOf(record));
  return Object.keys(out).length > 0 ? out : undefined;
}

/** {@link exportCapabilities} on an explicit runtime state. @internal */
export function exportCapabilitiesIn(state: RuntimeState): CapabilitiesSnapshot {
  const endpoints: EndpointSnapshot[] = [];
  for (const entry of endpointEntriesIn(state).values()) {
    const { supports } = entry;
    const models: Record<string, ModelSnapshot> = {};
    for (const [name, record] of supports.models) {
      const stored = modelSnapshot(record);
      if (stored) models[name] = stored;
    }
    const out: EndpointSnapshot = { baseUrl: entry.baseUrl, key: entry.keyHash };
    if (!supports.strictSchemas) out.strictSchemas = false;
    if (!supports.usageInStream) out.usageInStream = false;
    if (supports.grammarConstrained) out.grammarConstrained = true;
    if (supports.reasoningField) out.reasoningField = supports.reasoningField;
    if (Object.keys(models).length > 0) out.models = models;
    if (out.strictSchemas === false || out.usageInStream === false || out.grammarConstrained || out.reasoningField || out.models) endpoints.push(out);
  }
  return { version: CAPABILITIES_SNAPSHOT_VERSION, endpoints };
}

/**
 * Returns every latch the default runtime has learned, endpoint and model level, as a JSON-able
 * blob for a host to store and hand to {@link importCapabilities} after a restart.
 *
 * Only what differs from a fresh record is written, so an endpoint that refused nothing is left
 * out. API keys appear only as an HMAC under the runtime's key salt, which another runtime
 * matches only when given the same `keySalt`.
 *
 * @example
 * ```ts
 * await writeFile("capabilities.json", JSON.stringify(exportCapabilities()));
 * ```
 */
export function exportCapabilities(): CapabilitiesSnapshot {
  return exportCapabilitiesIn(defaultState);
}

function importModel(record: ModelCapabilities, stored: Record<string, unknown>, where: string, ignored: string[]): void {
  for (const flag of FLAGS) {
    const value = stored[flag];
    if (value === undefined) continue;
    if (typeof value !== "boolean") ignored.push(`${where}.${flag}: not a boolean`);
    // A latch only ever moves away from a fresh record's value; a stored default changes nothing.
    else if (value !== freshModelCapabilities()[flag]) record[flag] = value;
  }
  importList(
    stored,
    "refusedEfforts",
    where,
    ignored,
    (item) => EFFORT_LADDER.includes(item),
    () => record.refusedEfforts,
  );
  importList(
    stored,
    "droppedFields",
    where,
    ignored,
    (item) => FIELD_NAME.test(item),
    () => record.droppedFields,
  );
  importCombinations(record, stored, where, ignored);
  importReplay(record, stored, where, ignored);
  importShaping(record, stored, where, ignored);
  for (const key of Object.keys(stored)) {
    if (COMBINATION_KEYS.includes(key) || REPLAY_SNAPSHOT_KEYS.includes(key) || SHAPING_SNAPSHOT_KEYS.includes(key)) continue;
    if (!(FLAGS as readonly string[]).includes(key) && key !== "refusedEfforts" && key !== "droppedFields") ignored.push(`${where}.${key}: unknown field`);
  }
}

/**
 * Adds a stored list's understood entries (the first 200) to a record's list once each, the list
 * made only where an entry is added; anything else is said in `ignored`, where and why.
 */
function importList(
  stored: Record<string, unknown>,
  list: string,
  where: string,
  ignored: string[],
  understood: (item: string) => boolean,
  target: () => string[],
): void {
  const value = stored[list];
  if (value === undefined) return;
  if (!Array.isArray(value)) return void ignored.push(`${where}.${list}: not an array`);
  value.slice(0, 200).forEach((item, index) => {
    if (typeof item !== "string" || !understood(item)) ignored.push(`${where}.${list}[${index}]: not understood`);
    else if (!target().includes(item)) target().push(item);
  });
}

/** Adds a stored model's combination latches to its record: field lists, and an effort on the ladder. */
function importCombinations(record: ModelCapabilities, stored: Record<string, unknown>, where: string, ignored: string[]): void {
  for (const list of COMBINATION_LISTS) {
    importList(
      stored,
      list,
      where,
      ignored,
      (item) => FIELD_NAME.test(item) && !OWNED_FIELDS.has(item),
      () => (record[list] ??= []),
    );
  }
  const effort = stored.effortWithTools;
  if (effort === undefined || effort === "") return;
  if (typeof effort !== "string" || !EFFORT_LADDER.includes(effort)) ignored.push(`${where}.effortWithTools: not understood`);
  else record.effortWithTools = effort;
}

/** The `ignored` line for the entries of a list past what the import takes of it. */
function leftOut(where: string, room: number, length: number, bound: number, name: string): string {
  const why = room < MAX_ENTRIES || bound === MAX_ENTRIES ? `this runtime's ${name} is ${bound}` : `one import takes at most ${MAX_ENTRIES}`;
  return `${where}[${room}..${length - 1}]: ${length - room} left out, since ${why}`;
}

/** The `ignored` line for the records an import pushed out of the state. */
function evicted(what: string, name: string, bound: number): string {
  const plural = what.startsWith("1 ") ? " was" : "s were";
  return `(bound): ${what}${plural} evicted, least recently used first, to stay within ${name} (${bound})`;
}

/** {@link importCapabilities} on an explicit runtime state. @internal */
export function importCapabilitiesIn(state: RuntimeState, blob: unknown): ImportCapabilitiesResult {
  const result: ImportCapabilitiesResult = { endpoints: 0, models: 0, ignored: [] };
  try {
    let value = blob;
    if (typeof value === "string") {
      try {
        value = JSON.parse(value);
      } catch {
        result.ignored.push("(blob): a string that is not JSON");
        return result;
      }
    }
    if (!isPlainRecord(value)) {
      result.ignored.push("(blob): not an object");
      return result;
    }
    if (value.version !== CAPABILITIES_SNAPSHOT_VERSION) {
      result.ignored.push(`(blob): version ${JSON.stringify(value.version) ?? "missing"} is not ${CAPABILITIES_SNAPSHOT_VERSION}`);
      return result;
    }
    if (!Array.isArray(value.endpoints)) {
      result.ignored.push("endpoints: not an array");
      return result;
    }
    const bounded = capabilityBoundsIn(state);
    const evictedBefore = { endpoints: bounded.evictedEndpoints, models: bounded.evictedModels };
    const endpointRoom = Math.min(MAX_ENTRIES, bounded.bounds.maxEndpoints);
    const modelRoom = Math.min(MAX_ENTRIES, bounded.bounds.maxModelsPerEndpoint);
    if (value.endpoints.length > endpointRoom) {
      result.ignored.push(leftOut("endpoints", endpointRoom, value.endpoints.length, bounded.bounds.maxEndpoints, "maxEndpoints"));
    }
    value.endpoints.slice(0, endpointRoom).forEach((entry: unknown, index: number) => {
      const where = `endpoints[${index}]`;
      if (!isPlainRecord(entry)) return void result.ignored.push(`${where}: not an object`);
      if (typeof entry.baseUrl !== "string" || entry.baseUrl.trim() === "") return void result.ignored.push(`${where}: baseUrl missing`);
      const key = entry.key ?? "";
      const unmatchable = unmatchableKeyReason(state, key);
      if (unmatchable !== undefined || typeof key !== "string") return void result.ignored.push(`${where}: ${unmatchable ?? "key is not a hash"}`);
      const supports = endpointRecordIn(state, normaliseBaseUrl(entry.baseUrl), key);
      if (entry.strictSchemas === false) supports.strictSchemas = false;
      if (entry.usageInStream === false) supports.usageInStream = false;
      if (entry.grammarConstrained === true) {
        supports.grammarConstrained = true;
        supports.strictSchemas = false;
      } else if (entry.grammarConstrained !== undefined && entry.grammarConstrained !== false) {
        result.ignored.push(`${where}.grammarConstrained: not a boolean`);
      }
      if (typeof entry.reasoningField === "string" && (REPLAY_FIELDS as readonly string[]).includes(entry.reasoningField)) {
        supports.reasoningField = entry.reasoningField as ReplayField;
      } else if (entry.reasoningField !== undefined) {
        result.ignored.push(`${where}.reasoningField: not one of ${REPLAY_FIELDS.join(", ")}`);
      }
      result.endpoints += 1;
      if (entry.models === undefined) return;
      if (!isPlainRecord(entry.models)) return void result.ignored.push(`${where}.models: not an object`);
      const storedModels = Object.entries(entry.models);
      if (storedModels.length > modelRoom) {
        result.ignored.push(leftOut(`${where}.models`, modelRoom, storedModels.length, bounded.bounds.maxModelsPerEndpoint, "maxModelsPerEndpoint"));
      }
      for (const [name, stored] of storedModels.slice(0, modelRoom)) {
        const at = `${where}.models[${JSON.stringify(name)}]`;
        if (name === "" || !isPlainRecord(stored)) {
          result.ignored.push(`${at}: not understood`);
          continue;
        }
        importModel(modelCapabilitiesOf(supports, name), stored, at, result.ignored);
        result.models += 1;
      }
    });
    const evictedEndpoints = bounded.evictedEndpoints - evictedBefore.endpoints;
    const evictedModels = bounded.evictedModels - evictedBefore.models;
    if (evictedEndpoints > 0) result.ignored.push(evicted(`${evictedEndpoints} endpoint record`, "maxEndpoints", bounded.bounds.maxEndpoints));
    if (evictedModels > 0) result.ignored.push(evicted(`${evictedModels} model record`, "maxModelsPerEndpoint", bounded.bounds.maxModelsPerEndpoint));
  } catch (error) {
    result.ignored.push(`(blob): unreadable (${error instanceof Error ? error.message : String(error)})`);
  }
  return result;
}

/**
 * Applies a blob from {@link exportCapabilities} to the default runtime's latches, ignoring
 * whatever it does not understand; never throws.
 *
 * A latch in the blob is added to what is already known, never undone by it: a flag the blob
 * has off is turned off, refused efforts and dropped fields (also those refused only beside or
 * only without tools) are added, and an endpoint stored as
 * grammar-constrained is marked so (with strict schemas off). A blob written before
 * `grammarConstrained` existed imports as it always did, and so does one written before the
 * reasoning replay latches (`replayField`, `replayEveryTurn`, `replayFoldContent` on a model,
 * `reasoningField` on an endpoint), which import as written where valid. A blob of another
 * version, or one that is not an object, changes nothing; the result lists what was left out.
 * An entry whose key was fingerprinted under another key salt, or is an earlier version's
 * unkeyed `sha256:` hash, cannot match any key here and is left out and listed; so are entries
 * past the runtime's capability bounds, and records the import evicted are counted there too.
 *
 * @param blob - The stored blob, as an object or as its JSON text.
 */
export function importCapabilities(blob: unknown): ImportCapabilitiesResult {
  return importCapabilitiesIn(defaultState, blob);
}
