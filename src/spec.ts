/**
 * @module spec
 * An agent as a versioned JSON document: read it with {@link parseSpec}, layer documents into the
 * flat config the loop takes with {@link resolveAgentSpec}, share one with {@link exportSpec}, and
 * ask {@link findSpecSecrets} where a credential may still sit.
 *
 * This is the `@cubicecho/agent-core/spec` entry. It imports nothing from the rest of the package
 * but types, and no Node module, so a browser can load it to validate a pasted document; nothing
 * in the package imports it. docs/agent-spec.md explains the format field by field.
 */
import type { Endpoint, ModelParams, ReasoningEffort, ResolvedTask, RetryPolicy, ToolPolicy, WindowPolicy } from "./shapes/config.js";
import { BASE_FEATURES, DEFAULT_MAX_TOOL_ITERATIONS as SHARED_MAX_TOOL_ITERATIONS, HOOK_EVENTS, readDocument, SPEC_FORMAT, SPEC_MAJOR } from "./spec/read.js";
import { copyJsonValue, isPlainObject, ownValue, setOwn } from "./spec/values.js";

export { findSpecSecrets, SecretSign, type SpecSecret } from "./spec/secrets.js";
export { MAX_SERVER_ARGS } from "./spec/read-fields.js";

/** The `spec` token this package writes; a reader accepts any `agent-core/1.x`, since only the major is checked. */
export const SPEC_VERSION = `${SPEC_FORMAT}/${SPEC_MAJOR}`;

/** The feature names this host understands in a document's `requires`; `bundle` joins them under `{ bundle: true }`. */
export const SPEC_FEATURES: readonly string[] = BASE_FEATURES;

/** The lifecycle points a hook entry may name in its `event`. */
export const SPEC_HOOK_EVENTS: readonly string[] = HOOK_EVENTS;

/** The tool-step limit a resolved agent gets when no layer states `tools.maxIterations`; the loop's own default too. */
export const DEFAULT_MAX_TOOL_ITERATIONS = SHARED_MAX_TOOL_ITERATIONS;

/** The main model and its endpoint, as a document states them; every field is optional and absent inherits. */
export interface SpecModel {
  /** The model name as the endpoint knows it. */
  name?: string | undefined;
  /** The OpenAI-compatible base URL; one carrying `user:pass@` or a credential query is dropped. */
  baseUrl?: string | undefined;
  /** Sampling temperature, 0 to 2. */
  temperature?: number | undefined;
  /** The reply ceiling, a whole number; 0 sends none. */
  maxTokens?: number | undefined;
  /** The reasoning effort to ask for; `"off"` sends none. */
  reasoningEffort?: ReasoningEffort | undefined;
  /** Fields merged last into every request body; a layer that states it replaces the whole set. */
  extraBody?: Record<string, unknown> | undefined;
  /** The operator's own context window in tokens, a whole number above 0. */
  contextLength?: number | undefined;
  /** How long a call that does not stream may take, in seconds; 0 waits forever. */
  requestTimeoutSeconds?: number | undefined;
  /** How long the first streamed chunk may take, in seconds. */
  firstTokenSeconds?: number | undefined;
  /** Re-sends allowed for a transient failure, a whole number. */
  maxRetries?: number | undefined;
  /** How long to wait for a server still loading the model, in seconds. */
  loadingTimeoutSeconds?: number | undefined;
}

/** One piece of the system prompt; entries merge by `id` across layers. */
export interface SpecPromptEntry {
  /** The entry's name: a later layer's entry with the same id replaces it where it stood. */
  id: string;
  /** The text; `""` is a value, and is how a layer silences an inherited entry. */
  text: string;
}

/** How the agent may use tools. */
export interface SpecTools {
  /** The host's MCP servers the agent may use: absent is all of them, `[]` none, a list exactly those. */
  servers?: string[] | undefined;
  /** Declare every tool, load them on demand, or reach them through a fixed proxy. */
  discovery?: "eager" | "ondemand" | "proxy" | undefined;
  /** The most tool-calling steps a run may take, a whole number. */
  maxIterations?: number | undefined;
  /** The flattened spelling of `tasks.toolSelect.model` on the agent's endpoint; `""` means no preselection. */
  toolSelectModel?: string | undefined;
}

/** A hook the host's runner calls at a point in a session; entries merge by `id` across layers. */
export interface SpecHook {
  /** The hook's name: the same id in a later layer replaces the entry. */
  id: string;
  /** When it runs: one of {@link SPEC_HOOK_EVENTS}. */
  event?: string | undefined;
  /** The MCP server whose tool the runner calls. */
  server?: string | undefined;
  /** The tool on that server. */
  tool?: string | undefined;
  /** Arguments handed to the tool. */
  arguments?: Record<string, unknown> | undefined;
  /** This hook's share of the context budget, in tokens. */
  maxTokens?: number | undefined;
  /** How long the hook may take, in seconds. */
  timeoutSeconds?: number | undefined;
  /** `false` switches an inherited hook off; resolution leaves such an entry out. */
  enabled?: boolean | undefined;
}

/** A side task's settings as a document states them: a {@link ResolvedTask} with no key, since a document carries none. */
export type SpecTask = Omit<ResolvedTask, "apiKey">;

/** An MCP server shipped inside a document, read only under `parseSpec(document, { bundle: true })`. */
export interface SpecServer {
  /** The server's name; bundled servers merge by it across layers. */
  name: string;
  /** The transport, as `.mcp.json` spells it. */
  type?: "stdio" | "http" | "sse" | undefined;
  /** The program to run, for a stdio server. */
  command?: string | undefined;
  /** Its arguments. */
  args?: string[] | undefined;
  /** Its environment: where the format puts a bundled server's credentials, and what exportSpec strips. */
  env?: Record<string, string> | undefined;
  /** The address of a remote server. */
  url?: string | undefined;
  /** Headers sent to a remote server: stripped by exportSpec, like env. */
  headers?: Record<string, string> | undefined;
}

/** An agent as a stored document, as parseSpec returns it: every field optional but the token. */
export interface AgentSpec {
  /** The format and its version, `agent-core/<major>[.<minor>]` (whole numbers without a leading zero); only the major is checked. */
  spec: string;
  /** A name for people. */
  name?: string | undefined;
  /** A description for people. */
  description?: string | undefined;
  /** Features a host must understand to run the agent as meant; an unknown one refuses the document. */
  requires?: string[] | undefined;
  /** The main model and its endpoint. */
  model?: SpecModel | undefined;
  /** The system prompt, in pieces merged by id. */
  prompt?: SpecPromptEntry[] | undefined;
  /** The tool policy. */
  tools?: SpecTools | undefined;
  /** Lifecycle hooks, merged by id. */
  hooks?: SpecHook[] | undefined;
  /** Side tasks by name (`title`, `toolSelect`, `compaction`, `summary` …); the same name replaces. */
  tasks?: Record<string, SpecTask> | undefined;
  /** Servers shipped with the document. */
  bundle?: { mcpServers?: SpecServer[] } | undefined;
}

/** Options of {@link parseSpec}. */
export interface ParseSpecOptions {
  /**
   * Read `bundle.mcpServers`; importing a bundled server is running a program, so it is opt-in.
   * @default false
   */
  bundle?: boolean | undefined;
  /**
   * Feature names this host understands beyond {@link SPEC_FEATURES}, for `requires`.
   * @default []
   */
  features?: readonly string[] | undefined;
}

/** What {@link parseSpec} found: the document when it was not refused, and every problem either way. */
export interface ParseSpecResult {
  /** The normalised document; absent when any error refused it. */
  spec?: AgentSpec | undefined;
  /** Why the document was refused, one sentence each, prefixed with the path. */
  errors: string[];
  /** What was dropped and why, one sentence each, prefixed with the path. */
  warnings: string[];
}

/**
 * The flat config resolution yields: what runAgentLoop takes as `config`, plus what the host
 * wires itself (system prompt, servers, hooks, tasks, bundled servers).
 */
export interface ResolvedAgent extends Endpoint, ModelParams, ToolPolicy, RetryPolicy, WindowPolicy {
  /** Always `""`: a document names no key; apply resolveApiKey to choose one. */
  apiKey: "";
  /** The base URL; `""` when no layer names one. */
  baseUrl: string;
  /** The model; `""` when no layer names one. */
  model: string;
  /** The tool-step limit; {@link DEFAULT_MAX_TOOL_ITERATIONS} when no layer states one. */
  maxToolIterations: number;
  /** The system prompt: the merged entries' non-empty texts, joined by a blank line. */
  system: string;
  /** The host servers the agent may use: absent is all, `[]` none. */
  servers?: string[] | undefined;
  /** The merged hooks, less those switched off. */
  hooks: SpecHook[];
  /** Each side task with only what a layer stated; a task no layer names is absent. */
  tasks: Record<string, ResolvedTask>;
  /** Every feature some layer requires. */
  requires: string[];
  /** The merged bundled servers, where a layer carried any. */
  mcpServers?: SpecServer[] | undefined;
  /** The strongest layer's name. */
  name?: string | undefined;
  /** The strongest layer's description. */
  description?: string | undefined;
}

/**
 * Reads a JSON value as an agent document, reporting every problem at once.
 *
 * Refuses (errors, no spec) only for four faults of the document itself: it is not an object,
 * its `spec` token is missing or of another major, a `requires` entry names a feature this host
 * does not understand, or a container (a section, `tools.servers`, `bundle.mcpServers`) is of the
 * wrong kind. Anything else is dropped with a warning: unknown fields, wrong kinds, numbers out of
 * range (never clamped) and every field named like a credential at any depth. null reads as
 * absent; a `${VAR}` string is kept as written. Never throws.
 *
 * @example
 * const { spec, errors, warnings } = parseSpec(JSON.parse(text));
 * if (!spec) throw new Error(errors.join("\n"));
 */
export function parseSpec(value: unknown, options: ParseSpecOptions = {}): ParseSpecResult {
  try {
    const features = Array.isArray(options.features) ? options.features.filter((name) => typeof name === "string") : [];
    const { document, errors, warnings } = readDocument(value, { bundle: options.bundle === true, features });
    if (errors.length > 0 || document === undefined) return { errors, warnings };
    return { spec: document as unknown as AgentSpec, errors, warnings };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { errors: [`the document could not be read: ${reason}`], warnings: [] };
  }
}

const MODEL_KEYS = [
  "baseUrl",
  "temperature",
  "maxTokens",
  "reasoningEffort",
  "extraBody",
  "requestTimeoutSeconds",
  "firstTokenSeconds",
  "maxRetries",
  "loadingTimeoutSeconds",
  "contextLength",
] as const;

const TASK_KEYS = ["model", "baseUrl", "maxTokens", "temperature", "reasoningEffort", "extraBody"] as const;

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function copy<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  return copyJsonValue(value, { dropCredentials: false, path: "", warn: () => {}, maxDepth: Number.POSITIVE_INFINITY }) as T;
}

function section(layer: unknown, key: string): Record<string, unknown> | undefined {
  const value = isPlainObject(layer) ? ownValue(layer, key) : undefined;
  return isPlainObject(value) ? value : undefined;
}

function list(layer: unknown, key: string): unknown[] {
  const value = isPlainObject(layer) ? ownValue(layer, key) : undefined;
  return Array.isArray(value) ? value : [];
}

/** Merges entries by a key field: a new key is appended, a known key is replaced where it stood. */
function mergeByKey<T>(into: Map<string, T>, entries: unknown[], keyField: string): void {
  for (const entry of entries) {
    if (!isPlainObject(entry)) continue;
    const key = ownValue(entry, keyField);
    if (typeof key === "string" && key !== "") into.set(key, copy(entry) as T);
  }
}

/**
 * Layers agent documents, weakest first, into the flat config runAgentLoop takes.
 *
 * Absent inherits and nothing else does: 0, -1, `""` and `[]` are values. Model and tool fields
 * come from the strongest layer stating them; `extraBody` and `tools.servers` are replaced whole;
 * prompt entries, hooks, tasks and bundled servers merge by id (name, key): a new id stacks, the
 * same id replaces in place. `apiKey` is always `""`.
 *
 * @example
 * const config = resolveAgentSpec([settingsSpec, spec]);
 * const result = await runAgentLoop({ config, system: config.system, messages, tools, dispatch });
 */
export function resolveAgentSpec(layers: readonly AgentSpec[]): ResolvedAgent {
  const model: Record<string, unknown> = {};
  const tools: Record<string, unknown> = {};
  const prompt = new Map<string, SpecPromptEntry>();
  const hooks = new Map<string, SpecHook>();
  const tasks = new Map<string, ResolvedTask>();
  const servers = new Map<string, SpecServer>();
  const requires = new Set<string>();
  const names: Record<string, string> = {};
  let bundled = false;
  for (const layer of Array.isArray(layers) ? layers : []) {
    for (const key of ["name", "description"]) {
      const text = isPlainObject(layer) ? ownValue(layer, key) : undefined;
      if (typeof text === "string") names[key] = text;
    }
    const modelSection = section(layer, "model");
    if (modelSection) {
      if (present(ownValue(modelSection, "name"))) model.model = ownValue(modelSection, "name");
      for (const key of MODEL_KEYS) if (present(ownValue(modelSection, key))) model[key] = copy(ownValue(modelSection, key));
    }
    const toolSection = section(layer, "tools");
    if (toolSection) {
      const pairs = [
        ["servers", "servers"],
        ["discovery", "toolDiscovery"],
        ["maxIterations", "maxToolIterations"],
        ["toolSelectModel", "toolSelectModel"],
      ];
      for (const [from, to] of pairs) if (present(ownValue(toolSection, from as string))) tools[to as string] = copy(ownValue(toolSection, from as string));
    }
    mergeByKey(prompt, list(layer, "prompt"), "id");
    mergeByKey(hooks, list(layer, "hooks"), "id");
    const taskSection = section(layer, "tasks");
    for (const key of taskSection ? Object.keys(taskSection) : []) {
      const task = ownValue(taskSection as Record<string, unknown>, key);
      if (!isPlainObject(task)) continue;
      const stated: ResolvedTask = {};
      for (const field of TASK_KEYS) if (present(ownValue(task, field))) setOwn(stated as Record<string, unknown>, field, copy(ownValue(task, field)));
      tasks.set(key, stated);
    }
    const bundle = section(layer, "bundle");
    const serverList = bundle ? ownValue(bundle, "mcpServers") : undefined;
    if (Array.isArray(serverList)) {
      bundled = true;
      mergeByKey(servers, serverList, "name");
    }
    for (const feature of list(layer, "requires")) if (typeof feature === "string") requires.add(feature);
  }
  const system = [...prompt.values()]
    .map((entry) => entry.text)
    .filter((text) => typeof text === "string" && text !== "")
    .join("\n\n");
  const resolved: ResolvedAgent = {
    baseUrl: "",
    model: "",
    ...model,
    apiKey: "",
    maxToolIterations: DEFAULT_MAX_TOOL_ITERATIONS,
    ...tools,
    system,
    hooks: [...hooks.values()].filter((hook) => hook.enabled !== false),
    tasks: Object.fromEntries(tasks),
    requires: [...requires],
    ...names,
  };
  if (bundled) resolved.mcpServers = [...servers.values()];
  return resolved;
}

/**
 * Turns a spec into a document safe to hand on: every bundled server's `env` and `headers` are
 * removed, and the result is still a valid document.
 *
 * The output is a normalised copy: whatever parseSpec would drop is left out, and a missing or
 * foreign token becomes {@link SPEC_VERSION}. A credential in a server's args or url is kept,
 * since cutting it changes the server; {@link findSpecSecrets} says where those may be.
 *
 * @example
 * const shared = JSON.stringify(exportSpec(spec), null, 2);
 */
export function exportSpec(spec: AgentSpec): AgentSpec {
  const requires = isPlainObject(spec) ? ownValue(spec, "requires") : undefined;
  // Each feature once: a document may repeat one a hundred thousand times.
  const features = new Set<string>();
  if (Array.isArray(requires)) for (const name of requires) if (typeof name === "string") features.add(name);
  const source = isPlainObject(spec) ? spec : {};
  let document: Record<string, unknown> | undefined;
  try {
    document = readDocument(source, { bundle: true, features: [...features], warnings: false }).document;
  } catch {
    document = undefined;
  }
  if (document === undefined) return { spec: SPEC_VERSION };
  const bundle = section(document, "bundle");
  const serverList = bundle ? ownValue(bundle, "mcpServers") : undefined;
  if (Array.isArray(serverList)) {
    for (const server of serverList as Record<string, unknown>[]) {
      delete server.env;
      delete server.headers;
    }
  }
  return document as unknown as AgentSpec;
}
