/**
 * @module run/tool-catalogue
 * The catalogue and the `load_tools` meta-tool: the name-only list a system prompt carries, the
 * names a load asks for resolved against it and held to a cap, and what an on-demand load answers.
 *
 * `tool-loading` re-exports every public name here, and builds the proxied form on top of it.
 */

import type { CatalogServer } from "../shapes/catalog.js";
import type { ToolDefinition } from "../shapes/config.js";
import { isPlainRecord, positiveInteger } from "../text/guards.js";

/** The most tools one load brings in, unless a caller gives its own cap. */
export const LOAD_CAP = 12;

/** The most loaded tools carried from one run into the next, unless a caller gives its own cap. */
export const CARRY_CAP = 16;

/** The name of the meta-tool that loads tools from the catalogue. */
export const LOAD_TOOLS_NAME = "load_tools";

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
  if (typeof requested === "string")
    return requested
      .split(/[\s,]+/)
      .map((name) => name.trim())
      .filter(Boolean);
  if (Array.isArray(requested))
    return requested.flatMap((item) =>
      typeof item === "string" ? requestedNames(item, depth + 1) : isPlainRecord(item) ? requestedNames(item.name, depth + 1) : [],
    );
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

/** Joins tool names into the comma-separated list a load result says them as. */
export function list(names: readonly string[]): string {
  return names.join(", ");
}

/** Writes the closing sentences of a load result: names not in the catalogue, tools past the cap, a load that named nothing. */
export function closingSentences(resolution: LoadResolution): string[] {
  const lines: string[] = [];
  if (resolution.unknown.length > 0) lines.push(`Not in the catalogue: ${list(resolution.unknown)}.`);
  if (resolution.overCap.length > 0) {
    lines.push(
      `At most ${resolution.cap} tools load at once, so these were not loaded: ${list(resolution.overCap)}. Load them in another call if they are needed.`,
    );
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
  if (already.length > 0)
    lines.push(
      `You already have ${list(already)}; ${already.length === 1 ? "it was" : "they were"} loaded earlier and can be called as ${already.length === 1 ? "it is" : "they are"}.`,
    );
  lines.push(...closingSentences(resolution));
  return lines.join("\n");
}
