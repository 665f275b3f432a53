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

import type { Message, ToolDefinition } from "../shapes/config.js";
import { parseToolArguments } from "../text/tool-calls.js";
import { isPlainRecord } from "../text/guards.js";
import { contentText } from "../text/content-text.js";
import { closingSentences, list, LOAD_TOOLS, LOAD_TOOLS_NAME, type LoadResolution } from "./tool-catalogue.js";

export {
  LOAD_CAP,
  CARRY_CAP,
  LOAD_TOOLS_NAME,
  LOAD_TOOLS,
  catalogNames,
  catalogFromTools,
  describeCatalog,
  expandNames,
  carryOver,
  loadResult,
  type LoadResolution,
} from "./tool-catalogue.js";

/** One tool's definition as a proxied load writes it on a line of its result. */
export interface DefinitionLine {
  /** The tool's name. */
  name: string;
  /** What the tool does; absent where the tool declares nothing. */
  description?: string | undefined;
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

/** The name of the proxied mode's meta-tool that calls a loaded tool by name. */
export const CALL_TOOL_NAME = "call_tool";

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
export type ProxiedCall = { ok: true; name: string; args: Record<string, unknown>; raw: string } | { ok: false; message: string };

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
  return {
    ok: false,
    message: `The arguments of this call to ${name} are not a JSON object, so the call was not run. Call it again with the arguments written as one JSON object.`,
  };
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
