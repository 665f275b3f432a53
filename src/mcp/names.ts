/**
 * @module mcp/names
 * The names MCP tools are offered to the model under: the server's own name where an
 * OpenAI-compatible server takes it and no other tool has it, a rewrite otherwise, and the same
 * name for the same tool for as long as the toolset lives.
 */

import { TOOL_NAME_PATTERN } from "../index.js";

/** The most characters a tool name may have. */
const MAX_NAME = 64;

/** A name cut down to the characters and length an OpenAI-compatible server takes. */
export function cleanName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_-]+/g, "_").slice(0, MAX_NAME);
  return cleaned === "" || /^_+$/.test(cleaned) ? "tool" : cleaned;
}

/** Hands out the names a toolset's MCP tools are offered under, each tool keeping its name. */
export interface ToolNames {
  /** The name `tool` of `server` is offered under, given it now if it has none. */
  nameFor(server: string, tool: string): string;
  /** Forgets a tool's name once its server no longer lists it, so the name can be taken again. */
  release(server: string, tool: string): void;
}

/**
 * Makes the name keeper of one toolset.
 *
 * A tool keeps the server's name for it where that name is valid and free; `prefix` puts the
 * server's name in front of every tool's. A name that is not valid is cleaned; one that is
 * taken gets the server's name in front, then a number. Told of each rewrite.
 */
export function createToolNames(prefix: boolean, onRewrite: (server: string, tool: string, name: string) => void): ToolNames {
  const given = new Map<string, string>();
  const taken = new Set<string>();
  const key = (server: string, tool: string) => `${server}\u0000${tool}`;
  const fit = (base: string, suffix: string) => `${base.slice(0, MAX_NAME - suffix.length)}${suffix}`;
  return {
    nameFor(server, tool) {
      const known = given.get(key(server, tool));
      if (known !== undefined) return known;
      const wanted = prefix ? `${server}_${tool}` : tool;
      let name = TOOL_NAME_PATTERN.test(wanted) ? wanted : cleanName(wanted);
      if (taken.has(name)) name = cleanName(`${server}_${tool}`);
      for (let n = 2; taken.has(name); n += 1) name = fit(cleanName(`${server}_${tool}`), `_${n}`);
      given.set(key(server, tool), name);
      taken.add(name);
      if (name !== wanted) onRewrite(server, tool, name);
      return name;
    },
    release(server, tool) {
      const name = given.get(key(server, tool));
      if (name === undefined) return;
      given.delete(key(server, tool));
      taken.delete(name);
    },
  };
}
