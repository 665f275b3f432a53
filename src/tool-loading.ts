/**
 * @module tool-loading
 * On-demand tool discovery: a name-only catalogue on the system prompt, a `load_tools` meta-tool
 * that brings a tool's schema into the run when the model asks for it, and the proxied form of
 * the same thing behind a tool array that never changes.
 *
 * In the on-demand form a load adds the tool to the request's tool array. In the proxied form
 * every request declares {@link PROXY_TOOLS} and nothing else; a load answers with one line per
 * newly loaded tool, each line the JSON object `{"name":…,"description":…,"parameters":…}` (any
 * other line of the result is plain text), and the model calls it through `call_tool`. Since no
 * request declares those tools, that result is the only copy of their schemas the model has,
 * which is what {@link holdsDefinitions} looks for.
 */

import type { CatalogServer } from "./catalog.js";
import type { Message, ToolDefinition } from "./config.js";
import { parseToolArguments } from "./tool-calls.js";
import { isPlainRecord, positiveInteger } from "./internal/guards.js";
import { contentText } from "./internal/content-text.js";

/** One tool's definition as a proxied load writes it on a line of its result. */
export interface DefinitionLine {
  /** The tool's name. */
  name: string;
  /** What the tool does; absent where the tool declares nothing. */
  description?: string;
  /** The tool's parameters schema; always an object on the line. */
  parameters: Record<string, unknown>;
}

const EMPTY_PARAMETERS: Readonly<Record<string, unknown>> = Object.freeze({ type: "object", properties: Object.freeze({}) });

/**
 * Writes one tool as the line a proxied load result carries: its name, description and parameters as JSON.
 *
 * The keys are written in that order. A tool whose parameters are missing or a boolean schema
 * is written with an empty object schema, so every line is readable by {@link parseDefinitionLine}.
 */
export function formatDefinitionLine(tool: ToolDefinition | DefinitionLine): string {
  const source: { name?: unknown; description?: unknown; parameters?: unknown } =
    "function" in tool && tool.function && typeof tool.function === "object" ? tool.function : (tool as DefinitionLine);
  const parameters =
    source.parameters && typeof source.parameters === "object" && !Array.isArray(source.parameters)
      ? (source.parameters as Record<string, unknown>)
      : EMPTY_PARAMETERS;
  const line: DefinitionLine = { name: String(source.name ?? "") } as DefinitionLine;
  if (typeof source.description === "string") line.description = source.description;
  line.parameters = parameters;
  return JSON.stringify(line);
}

/**
 * Reads one line of a load result as a tool definition, or returns undefined for a line of plain text.
 *
 * A definition line is a JSON object with a string `name` and an object `parameters`.
 */
export function parseDefinitionLine(line: string): DefinitionLine | undefined {
  if (typeof line !== "string") return undefined;
  const text = line.trim();
  if (!text.startsWith("{") || !text.endsWith("}")) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) return undefined;
  const candidate = value as { name?: unknown; description?: unknown; parameters?: unknown };
  if (typeof candidate.name !== "string") return undefined;
  if (!candidate.parameters || typeof candidate.parameters !== "object" || Array.isArray(candidate.parameters)) return undefined;
  const result: DefinitionLine = { name: candidate.name, parameters: candidate.parameters as Record<string, unknown> };
  if (typeof candidate.description === "string") result.description = candidate.description;
  return result;
}

/**
 * Tells whether a message is a tool result that carries tool definitions, as a proxied load writes them.
 *
 * True for a `tool` message at least one line of whose content reads as a definition line
 * (see {@link parseDefinitionLine}); false for anything else, never throwing. A prune of a
 * host's own should keep such a result, since it holds the only copy of those schemas.
 */
export function holdsDefinitions(message: Message): boolean {
  if (!message || typeof message !== "object" || message.role !== "tool") return false;
  const text = contentText(message.content);
  if (!text.includes("{")) return false;
  for (const line of text.split("\n")) {
    if (parseDefinitionLine(line)) return true;
  }
  return false;
}

/** The most tools one load brings in, unless a caller gives its own cap. */
export const LOAD_CAP = 12;

/** The most loaded tools carried from one run into the next, unless a caller gives its own cap. */
export const CARRY_CAP = 16;

/** The name of the meta-tool that loads tools from the catalogue. */
export const LOAD_TOOLS_NAME = "load_tools";

/** The name of the proxied mode's meta-tool that calls a loaded tool by name. */
export const CALL_TOOL_NAME = "call_tool";

/** The `load_tools` meta-tool as a request declares it: a list of names to load. */
export const LOAD_TOOLS: ToolDefinition = Object.freeze({
  type: "function",
  function: Object.freeze({
    name: LOAD_TOOLS_NAME,
    description: `Load tools from the catalogue in the system prompt so they can be called. Give tool names, or a server's name for all of its tools; up to ${LOAD_CAP} tools load at once.`,
    parameters: Object.freeze({
      type: "object",
      properties: Object.freeze({
        names: Object.freeze({ type: "array", items: Object.freeze({ type: "string" }), description: "The names of the tools to load." }),
      }),
      required: Object.freeze(["names"]),
    }),
  }),
}) as ToolDefinition;

/** The `call_tool` meta-tool as a proxied request declares it: a loaded tool's name and its arguments. */
export const CALL_TOOL: ToolDefinition = Object.freeze({
  type: "function",
  function: Object.freeze({
    name: CALL_TOOL_NAME,
    description: "Call a tool loaded with load_tools: its name, and its arguments as the tool's parameters describe them.",
    parameters: Object.freeze({
      type: "object",
      properties: Object.freeze({
        name: Object.freeze({ type: "string", description: "The name of the loaded tool to call." }),
        arguments: Object.freeze({ type: "object", description: "The tool's arguments." }),
      }),
      required: Object.freeze(["name"]),
    }),
  }),
}) as ToolDefinition;

/**
 * The whole tool array of a proxied request: `call_tool` and `load_tools`, in name order.
 *
 * It never changes, so the head of the prompt stays the same on every step of every run.
 */
export const PROXY_TOOLS: readonly ToolDefinition[] = Object.freeze([CALL_TOOL, LOAD_TOOLS]);

function firstLine(text: unknown): string {
  if (typeof text !== "string") return "";
  return text.trim().split("\n", 1)[0]!.trim();
}

function byName<T extends { name: string }>(a: T, b: T): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function serversOf(catalog: readonly CatalogServer[] | undefined): CatalogServer[] {
  if (!Array.isArray(catalog)) return [];
  return catalog.filter(
    (server): server is CatalogServer => isPlainRecord(server) && typeof server.name === "string" && Array.isArray((server as unknown as CatalogServer).tools),
  );
}

function toolsOfServer(server: CatalogServer): { name: string; description?: string }[] {
  return server.tools.filter((tool) => isPlainRecord(tool) && typeof tool.name === "string" && tool.name !== "");
}

/** Lists every tool name a catalogue holds, in catalogue order, each once. */
export function catalogNames(catalog: readonly CatalogServer[] | undefined): string[] {
  const names: string[] = [];
  const seen = new Set<string>();
  for (const server of serversOf(catalog)) {
    for (const tool of toolsOfServer(server)) {
      if (seen.has(tool.name)) continue;
      seen.add(tool.name);
      names.push(tool.name);
    }
  }
  return names;
}

/**
 * Makes a one-server catalogue from tool definitions, for a run given tools but no catalogue.
 *
 * Each tool is listed with the first line of its description.
 */
export function catalogFromTools(tools: readonly ToolDefinition[] | undefined, serverName = "tools"): CatalogServer[] {
  if (!Array.isArray(tools)) return [];
  const listed = tools
    .filter((tool) => typeof tool?.function?.name === "string" && tool.function.name !== "")
    .map((tool) => {
      const description = firstLine(tool.function.description);
      return description ? { name: tool.function.name, description } : { name: tool.function.name };
    });
  return listed.length > 0 ? [{ name: serverName, tools: listed }] : [];
}

/**
 * Writes the name-only catalogue a system prompt carries in on-demand and proxied modes.
 *
 * Servers and their tools are listed in name order, one line per tool with the first line of its
 * description, so the text depends on the set of tools and not on the order servers connected
 * in, and it is the same on every step: nothing in it says what has been loaded. Empty for an
 * empty catalogue.
 *
 * @param catalog - The connected servers, name-only.
 * @param cap - The most tools one load brings in, said in the text. @default 12
 */
export function describeCatalog(catalog: readonly CatalogServer[] | undefined, cap: number = LOAD_CAP): string {
  const servers = serversOf(catalog)
    .map((server) => ({ ...server, tools: toolsOfServer(server).slice().sort(byName) }))
    .filter((server) => server.tools.length > 0)
    .sort(byName);
  if (servers.length === 0) return "";
  const lines = [
    `Tools you can load with ${LOAD_TOOLS_NAME}, by name (or a server's name for all of its tools), up to ${positiveInteger(cap) ?? LOAD_CAP} at a time:`,
  ];
  for (const server of servers) {
    const label = firstLine(server.label);
    lines.push("", label ? `${server.name} (${label})` : server.name);
    for (const tool of server.tools) {
      const description = firstLine(tool.description);
      lines.push(description ? `- ${tool.name}: ${description}` : `- ${tool.name}`);
    }
  }
  return lines.join("\n");
}

/** What a load asked for, resolved against a catalogue and held to a cap. */
export interface LoadResolution {
  /** The tools to load, in the order asked, each once, at most `cap` of them. */
  names: string[];
  /** Names asked for that match no tool and no server in the catalogue. */
  unknown: string[];
  /** Tools that resolved but fell past the cap, and were not loaded. */
  overCap: string[];
  /** The cap this resolution was held to. */
  cap: number;
  /** Whether the request named anything at all. */
  asked: boolean;
}

/** Reads the names a load_tools call asked for out of whatever the model wrote. */
function requestedNames(requested: unknown, depth = 0): string[] {
  if (depth > 3) return [];
  if (typeof requested === "string") return requested.split(/[\s,]+/).map((name) => name.trim()).filter(Boolean);
  if (Array.isArray(requested)) return requested.flatMap((item) => (typeof item === "string" ? requestedNames(item, depth + 1) : isPlainRecord(item) ? requestedNames(item.name, depth + 1) : []));
  if (isPlainRecord(requested)) {
    for (const key of ["names", "tools", "tool_names", "toolNames", "name", "tool"]) {
      if (key in requested) return requestedNames(requested[key], depth + 1);
    }
  }
  return [];
}

/**
 * Resolves the names a load asked for against a catalogue: tool names, server names, held to a cap.
 *
 * A tool's own name resolves to itself; a server's name to every tool it has; failing those, a
 * name that matches one tool ignoring case, or written `server.tool`, `server/tool` or
 * `server__tool`, resolves to that tool. Whatever the model wrote is read: `{ names: [...] }`, a
 * bare array, a comma-separated string, `{ name }` or `{ tools }`; anything else asks for
 * nothing. Tools past the cap are listed in `overCap`, and the cap rides on the resolution so
 * {@link loadResult} names the number it was held to.
 *
 * @param requested - The load_tools arguments, or the names themselves.
 * @param catalog - The connected servers, name-only.
 * @param cap - The most tools one load brings in. @default 12
 */
export function expandNames(requested: unknown, catalog: readonly CatalogServer[] | undefined, cap: number = LOAD_CAP): LoadResolution {
  const limit = positiveInteger(cap) ?? LOAD_CAP;
  const asked = requestedNames(requested);
  const servers = serversOf(catalog);
  const byTool = new Map<string, string>();
  const byLower = new Map<string, string[]>();
  for (const name of catalogNames(servers)) {
    byTool.set(name, name);
    const lower = name.toLowerCase();
    byLower.set(lower, [...(byLower.get(lower) ?? []), name]);
  }
  const resolved: string[] = [];
  const unknown: string[] = [];
  const seen = new Set<string>();
  const add = (name: string): void => {
    if (seen.has(name)) return;
    seen.add(name);
    resolved.push(name);
  };
  for (const name of asked) {
    const exact = byTool.get(name);
    if (exact) {
      add(exact);
      continue;
    }
    const server = servers.find((entry) => entry.name === name) ?? servers.find((entry) => entry.name.toLowerCase() === name.toLowerCase());
    if (server) {
      for (const tool of toolsOfServer(server)) add(tool.name);
      continue;
    }
    const loose = byLower.get(name.toLowerCase());
    if (loose && loose.length === 1) {
      add(loose[0]!);
      continue;
    }
    const qualified = /^(.+?)(?:\.|\/|__)(.+)$/.exec(name);
    const inner = qualified ? servers.find((entry) => entry.name === qualified[1]) : undefined;
    const tool = inner ? toolsOfServer(inner).find((entry) => entry.name === qualified![2]) : undefined;
    if (tool) {
      add(tool.name);
      continue;
    }
    if (!unknown.includes(name)) unknown.push(name);
  }
  return { names: resolved.slice(0, limit), unknown, overCap: resolved.slice(limit), cap: limit, asked: asked.length > 0 };
}

/**
 * Chooses which loaded tools a run carries into the next one: the most recent, held to a cap.
 *
 * `loaded` is in the order the tools were loaded or last used, oldest first; a name that appears
 * twice counts at its later place. The result keeps that order.
 *
 * @param loaded - Tool names, oldest first.
 * @param cap - The most tools carried. @default 16
 */
export function carryOver(loaded: readonly string[] | undefined, cap: number = CARRY_CAP): string[] {
  if (!Array.isArray(loaded)) return [];
  const limit = positiveInteger(cap) ?? CARRY_CAP;
  const kept: string[] = [];
  const seen = new Set<string>();
  for (let index = loaded.length - 1; index >= 0 && kept.length < limit; index -= 1) {
    const name = loaded[index];
    if (typeof name !== "string" || name === "" || seen.has(name)) continue;
    seen.add(name);
    kept.push(name);
  }
  return kept.reverse();
}

function list(names: readonly string[]): string {
  return names.join(", ");
}

function closingSentences(resolution: LoadResolution): string[] {
  const lines: string[] = [];
  if (resolution.unknown.length > 0) lines.push(`Not in the catalogue: ${list(resolution.unknown)}.`);
  if (resolution.overCap.length > 0) {
    lines.push(`At most ${resolution.cap} tools load at once, so these were not loaded: ${list(resolution.overCap)}. Load them in another call if they are needed.`);
  }
  if (!resolution.asked) lines.push(`No tool names were given. Call ${LOAD_TOOLS_NAME} with {"names": ["tool_name"]}, using names from the catalogue.`);
  return lines;
}

/**
 * Writes the result an on-demand `load_tools` call answers with: what loaded, what the model already had, what is not there.
 *
 * A tool in `have` is not loaded again: the model is told it already has it. Names outside the
 * catalogue and tools past the cap (the cap the resolution was held to) are said too.
 *
 * @param resolution - From {@link expandNames}.
 * @param have - Tools already loaded in this run.
 */
export function loadResult(resolution: LoadResolution, have: readonly string[] = []): string {
  const held = new Set(have);
  const fresh = resolution.names.filter((name) => !held.has(name));
  const already = resolution.names.filter((name) => held.has(name));
  const lines: string[] = [];
  if (fresh.length > 0) lines.push(`Loaded: ${list(fresh)}. ${fresh.length === 1 ? "It" : "They"} can be called now.`);
  if (already.length > 0) lines.push(`You already have ${list(already)}; ${already.length === 1 ? "it was" : "they were"} loaded earlier and can be called as ${already.length === 1 ? "it is" : "they are"}.`);
  lines.push(...closingSentences(resolution));
  return lines.join("\n");
}

/**
 * Writes the result a proxied `load_tools` call answers with: each new tool as a line of JSON.
 *
 * Each newly loaded tool is one line `{"name":…,"description":…,"parameters":…}` (see
 * {@link formatDefinitionLine}), since no request will declare it; a tool whose definition is
 * already in the conversation (`defined`) gets a line pointing back to it instead of a second
 * copy. A resolved name with no definition in `tools` is said to be unavailable. Names outside
 * the catalogue and tools past the cap are said as in {@link loadResult}.
 *
 * @param resolution - From {@link expandNames}.
 * @param tools - Every tool the run may reach, with its definition.
 * @param defined - Tools whose definitions the conversation already holds.
 */
export function proxyLoadResult(resolution: LoadResolution, tools: readonly ToolDefinition[], defined: readonly string[] = []): string {
  const definitions = new Map<string, ToolDefinition>();
  for (const tool of Array.isArray(tools) ? tools : []) {
    const name = tool?.function?.name;
    if (typeof name === "string" && !definitions.has(name)) definitions.set(name, tool);
  }
  const held = new Set(defined);
  const lines: string[] = [];
  const missing: string[] = [];
  let fresh = 0;
  for (const name of resolution.names) {
    if (held.has(name)) {
      lines.push(`${name}: already loaded; its definition is earlier in this conversation.`);
      continue;
    }
    const definition = definitions.get(name);
    if (!definition) {
      missing.push(name);
      continue;
    }
    lines.push(formatDefinitionLine(definition));
    fresh += 1;
  }
  if (missing.length > 0) lines.push(`No definition is available for: ${list(missing)}.`);
  lines.push(...closingSentences(resolution));
  if (fresh > 0 || held.size > 0) lines.push(`Call a loaded tool with ${CALL_TOOL_NAME}: {"name": "tool_name", "arguments": {...}}.`);
  return lines.join("\n");
}

/** What a `call_tool` call comes to: the call it stands for, or why it was refused. */
export type ProxiedCall =
  | { ok: true; name: string; args: Record<string, unknown>; raw: string }
  | { ok: false; message: string };

/**
 * Reads a `call_tool` call as the call it stands for: the inner tool's name and arguments.
 *
 * The arguments may be an object or JSON in a string (repaired as parseToolArguments repairs
 * them); absent is `{}`. A name outside `known` (the catalogue), a missing name, or arguments that
 * are not an object are refused with a sentence for the model. `raw` is the inner arguments as
 * text, as a dispatcher is handed them.
 *
 * @param args - The call_tool call's own arguments, already read as an object.
 * @param known - The tool names call_tool may reach.
 */
export function proxiedCall(args: unknown, known: readonly string[]): ProxiedCall {
  const outer = isPlainRecord(args) ? args : {};
  const name = typeof outer.name === "string" ? outer.name.trim() : typeof outer.tool === "string" ? outer.tool.trim() : "";
  if (!name) return { ok: false, message: `${CALL_TOOL_NAME} needs the name of a loaded tool: {"name": "tool_name", "arguments": {...}}.` };
  if (name === CALL_TOOL_NAME || name === LOAD_TOOLS_NAME || !known.includes(name)) {
    return { ok: false, message: `${CALL_TOOL_NAME} refused: "${name}" is not a tool in the catalogue.` };
  }
  const inner = "arguments" in outer ? outer.arguments : "args" in outer ? outer.args : undefined;
  if (inner === undefined || inner === null || inner === "") return { ok: true, name, args: {}, raw: "{}" };
  if (isPlainRecord(inner)) return { ok: true, name, args: inner, raw: JSON.stringify(inner) };
  if (typeof inner === "string") {
    try {
      return { ok: true, name, args: parseToolArguments(inner, { toolName: name }), raw: inner };
    } catch (error) {
      return { ok: false, message: error instanceof Error ? error.message : String(error) };
    }
  }
  return { ok: false, message: `The arguments of this call to ${name} are not a JSON object, so the call was not run. Call it again with the arguments written as one JSON object.` };
}

/**
 * Lists the tools whose definitions a transcript already holds, from proxied load results.
 *
 * Reads every line of every tool message that {@link holdsDefinitions}; what a compaction folded
 * away is no longer there, so it can be loaded again.
 */
export function definedTools(messages: readonly Message[]): string[] {
  const names: string[] = [];
  const seen = new Set<string>();
  for (const message of Array.isArray(messages) ? messages : []) {
    if (!holdsDefinitions(message)) continue;
    for (const line of contentText(message.content).split("\n")) {
      const definition = parseDefinitionLine(line);
      if (definition && !seen.has(definition.name)) {
        seen.add(definition.name);
        names.push(definition.name);
      }
    }
  }
  return names;
}
