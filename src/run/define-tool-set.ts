/**
 * @module run/define-tool-set
 * {@link toolset}: typed tools (and other toolsets, an MCP one say) turned into the `tools`,
 * `catalog` and `dispatch` runAgentLoop takes, read afresh each time they are read.
 */

import type { CatalogServer } from "../shapes/catalog.js";
import type { ToolDefinition } from "../shapes/config.js";
import { AgentCoreError, brand, isErrorNamed, type AgentCoreErrorOptions } from "../text/error-base.js";
import { isPlainRecord } from "../text/guards.js";
import { catalogFromTools } from "./tool-catalogue.js";
import type { Dispatch } from "./run-calls.js";
import type { DefinedTool } from "./define-tool-types.js";

/**
 * The three options runAgentLoop reads a run's tools from, made from one list so they agree;
 * spread it into the loop's options.
 *
 * `tools` and `catalog` are read when they are read: a toolset whose tools change (an MCP server
 * that says its list changed) hands the next run the new list, and spreading copies the list as
 * it stands.
 */
export interface Toolset {
  /** Every tool, as a request declares it. */
  readonly tools: ToolDefinition[];
  /** The same tools by name and one line each, per server. */
  readonly catalog: CatalogServer[];
  /** Runs a call of any of them. */
  readonly dispatch: Dispatch;
}

/** One entry of {@link toolset}'s list: a tool from defineTool, or another toolset whose tools join it. */
export type ToolsetEntry = DefinedTool<any> | Toolset; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Options for {@link toolset}. */
export interface ToolsetOptions {
  /** The catalogue's name for the defined tools, as the model reads it above them. @default "tools" */
  name?: string | undefined;
  /** A short label said beside that name. */
  label?: string | undefined;
}

/** Options for a {@link ToolNotFound}. */
export interface ToolNotFoundOptions extends AgentCoreErrorOptions {
  /** The name that was called. */
  toolName: string;
  /** The names the toolset has. */
  availableTools: readonly string[];
}

/** A toolset was asked to run a tool it does not have. */
export class ToolNotFound extends AgentCoreError {
  override readonly name = "ToolNotFound" as const;
  /** The name that was called. */
  readonly toolName: string;
  /** The names the toolset has. */
  readonly availableTools: readonly string[];

  static {
    brand(this, "ToolNotFound");
  }

  /** Makes the error for a call of `toolName`. */
  constructor(options: ToolNotFoundOptions) {
    const listed = options.availableTools.slice(0, 50).join(", ");
    super({
      message: options.message ?? `There is no tool named "${options.toolName}". ${listed ? `The tools are: ${listed}.` : "No tool is available."}`,
      cause: options.cause,
    });
    this.toolName = options.toolName;
    this.availableTools = Object.freeze(options.availableTools.slice());
  }

  /** Tells a ToolNotFound from anything else, also one from another copy of this package. */
  static override is(value: unknown): value is ToolNotFound {
    return isErrorNamed(value, "ToolNotFound", "toolName");
  }
}

/** Whether a value is a tool made by defineTool (or one shaped like it). */
export function isDefinedTool(value: unknown): value is DefinedTool {
  return (
    isPlainRecord(value) &&
    typeof value.name === "string" &&
    typeof value.run === "function" &&
    isPlainRecord(value.definition) &&
    (value.definition as { type?: unknown }).type === "function"
  );
}

function isToolset(value: unknown): value is Toolset {
  return isPlainRecord(value) && typeof value.dispatch === "function" && Array.isArray(value.tools);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object that is neither a defined tool nor a toolset" : `${typeof value} ${String(value)}`;
}

/**
 * Turns typed tools (and other toolsets) into the `tools`, `catalog` and `dispatch` runAgentLoop takes.
 *
 * The defined tools are one catalogue server (`options.name`, "tools" by default) and are
 * dispatched by name; a nested toolset (an MCP one, say) adds its own tools and catalogue servers
 * after them and runs its own calls. `tools` and `catalog` are read afresh each time, so a nested
 * toolset whose tools changed is seen by the next run. Where a nested toolset offers a name
 * already taken, the earlier entry keeps it. A call of a name no entry has throws
 * {@link ToolNotFound}, which the model reads as the failed result. Throws a TypeError for an
 * entry that is neither, and for two defined tools of one name.
 *
 * @param entries - Tools from defineTool, and toolsets.
 * @param options - The catalogue's name and label for the defined tools.
 * @example
 * ```ts
 * const result = await runAgentLoop({ config, messages, ...toolset([weather, calculator]) });
 * ```
 */
export function toolset(entries: readonly ToolsetEntry[], options: ToolsetOptions = {}): Toolset {
  if (!Array.isArray(entries)) throw new TypeError(`toolset: expected a list of tools from defineTool (or toolsets), got ${describe(entries)}.`);
  const own = new Map<string, DefinedTool>();
  const nested: Toolset[] = [];
  entries.forEach((entry, index) => {
    if (isDefinedTool(entry)) {
      if (own.has(entry.name))
        throw new TypeError(`toolset: the tool at index ${index} is named "${entry.name}", like an earlier one; tool names must be distinct.`);
      own.set(entry.name, entry);
    } else if (isToolset(entry)) nested.push(entry);
    else throw new TypeError(`toolset: the entry at index ${index} is ${describe(entry)}.`);
  });
  const serverName = typeof options.name === "string" && options.name.trim() !== "" ? options.name.trim() : "tools";
  const label = typeof options.label === "string" && options.label.trim() !== "" ? options.label.trim() : undefined;
  const ownDefinitions = [...own.values()].map((tool) => tool.definition);

  /** Every tool by name with the entry that runs it, earlier entries first. */
  const owners = (): Map<string, { definition: ToolDefinition; owner: DefinedTool | Toolset }> => {
    const map = new Map<string, { definition: ToolDefinition; owner: DefinedTool | Toolset }>();
    for (const tool of own.values()) map.set(tool.name, { definition: tool.definition, owner: tool });
    for (const set of nested) {
      for (const definition of set.tools) {
        const name = definition?.function?.name;
        if (typeof name === "string" && !map.has(name)) map.set(name, { definition, owner: set });
      }
    }
    return map;
  };

  const dispatch: Dispatch = (request, signal) => {
    const tool = own.get(request.name);
    if (tool) return tool.run(request, signal);
    const found = owners().get(request.name);
    if (!found) throw new ToolNotFound({ toolName: request.name, availableTools: [...owners().keys()] });
    return (found.owner as Toolset).dispatch(request, signal);
  };

  return Object.freeze({
    get tools(): ToolDefinition[] {
      return [...owners().values()].map((entry) => entry.definition);
    },
    get catalog(): CatalogServer[] {
      const taken = new Set(own.keys());
      const servers: CatalogServer[] = catalogFromTools(ownDefinitions, serverName).map((server) => (label ? { ...server, label } : server));
      for (const set of nested) {
        const names = new Set(set.tools.map((definition) => definition?.function?.name));
        for (const server of Array.isArray(set.catalog) ? set.catalog : []) {
          const tools = server.tools.filter((tool) => names.has(tool.name) && !taken.has(tool.name));
          for (const tool of tools) taken.add(tool.name);
          if (tools.length > 0) servers.push({ ...server, tools });
        }
      }
      return servers;
    },
    dispatch,
  });
}
