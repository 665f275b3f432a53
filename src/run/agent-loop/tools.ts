/**
 * @module run/agent-loop/tools
 * What the loop knows about a run's tools between steps: what each discovery mode declares,
 * what has been loaded, and how a call is answered — load_tools and call_tool by the loop, a
 * catalogued tool loaded as it is called, an unknown name refused — with the load counts only the
 * loop can see.
 */

import type { CatalogServer, CatalogTool } from "../../shapes/catalog.js";
import type { Message, ToolDefinition } from "../../shapes/config.js";
import type { CallRoute, ReadCall } from "../run-calls.js";
import {
  CALL_TOOL_NAME,
  LOAD_TOOLS,
  LOAD_TOOLS_NAME,
  PROXY_TOOLS,
  carryOver,
  catalogFromTools,
  catalogNames,
  definedTools,
  describeCatalog,
  expandNames,
  loadResult,
  proxiedCall,
  proxyLoadResult,
  type LoadResolution,
} from "../tool-loading.js";

/** How a run declares its tools. */
export type ToolDiscovery = "eager" | "ondemand" | "proxy";

/** A request's head: the system prompt it leads with and the tools it declares. */
export interface StepHead {
  /** The system prompt, catalogue included where the mode carries one; empty for none. */
  system: string;
  /** The tools, before toolOrder orders them. */
  tools: ToolDefinition[];
}

/** The load_tools counts only the loop can see. */
export interface LoadCounts {
  /** Tools newly loaded: by load_tools, by a preselection, or by being called while catalogued. */
  toolsLoaded: number;
  /** Names asked for that were already loaded. */
  redundantLoads: number;
  /** Names asked for, loaded or called, that no tool has. */
  unknownToolNames: string[];
}

/** The loop's view of a run's tools. */
export interface RunTools {
  readonly mode: ToolDiscovery;
  /** Every tool the run may reach, by name. */
  readonly definitions: ReadonlyMap<string, ToolDefinition>;
  /** The catalogue held to the tools that have a definition. */
  readonly catalog: CatalogServer[];
  /** The names in that catalogue. */
  readonly loadable: readonly string[];
  /** The tools loaded so far, in load order (on-demand mode). */
  readonly loaded: string[];
  readonly counts: LoadCounts;
  /** The request head for a step: the shortlist alone where it is routed exclusively and this is the first step. */
  head(shortlist: readonly string[] | undefined): StepHead;
  /** Every tool name a model could mean: declared, loadable or a meta-tool. */
  knownNames(): string[];
  /** Loads a shortlist the way load_tools would have. */
  loadShortlist(names: readonly string[]): void;
  /** Answers a proxied preselection: the load_tools result for the shortlist against the transcript. */
  proxyShortlist(names: readonly string[], transcript: readonly Message[]): string;
  /** Decides how one call of a step is answered; `transcript` is what the request was built from. */
  route(read: ReadCall, transcript: readonly Message[]): CallRoute;
  /** Clears what one step remembered, once its results are in the transcript. */
  endStep(): void;
  /** Marks a tool as just used, for what carries into the next run. */
  touch(name: string): void;
  /** What carries into the next run (on-demand mode); empty otherwise. */
  carried(): string[];
  /** What was loaded, in load order, and the same names most recently used last, for a paused run's state. */
  saved(): { loaded: string[]; recent: string[] };
}

/** What a paused run's state carries of its tools, for the run that resumes it. */
export interface RestoredTools {
  /** The tools loaded, in load order. */
  loaded: readonly string[];
  /** The same names, most recently used last. */
  recent: readonly string[];
}

function joinSystem(system: string, catalogText: string): string {
  if (!catalogText) return system;
  return system ? `${system}\n\n${catalogText}` : catalogText;
}

/**
 * Builds the loop's view of a run's tools; a resumed run's `restored` loads take the place of
 * what was carried in, held to the tools that still have a definition. @internal
 */
export function createRunTools(
  mode: ToolDiscovery,
  system: string,
  tools: readonly ToolDefinition[] | undefined,
  catalog: readonly CatalogServer[] | undefined,
  carried: readonly string[] | undefined,
  restored?: RestoredTools,
): RunTools {
  const definitions = new Map<string, ToolDefinition>();
  for (const tool of Array.isArray(tools) ? tools : []) {
    const name = tool?.function?.name;
    if (typeof name === "string" && name !== "" && !definitions.has(name)) definitions.set(name, tool);
  }
  const given = Array.isArray(catalog) && catalog.length > 0 ? catalog : catalogFromTools([...definitions.values()]);
  const held = given
    .filter((server) => server && typeof server === "object" && Array.isArray(server.tools))
    .map((server) => ({ ...server, tools: server.tools.filter((tool: CatalogTool) => typeof tool?.name === "string" && definitions.has(tool.name)) }))
    .filter((server) => server.tools.length > 0);
  const loadable = catalogNames(held);
  const loadableSet = new Set(loadable);
  const catalogText = mode === "eager" ? "" : describeCatalog(held);
  const fullSystem = joinSystem(system, catalogText);
  const reachable = (name: unknown): name is string => typeof name === "string" && (loadableSet.has(name) || definitions.has(name));
  const loaded: string[] = mode !== "ondemand" ? [] : restored ? [...new Set(restored.loaded)].filter(reachable) : carryOver(carried).filter(reachable);
  const recency: string[] = restored && mode === "ondemand" ? [...new Set(restored.recent)].filter(reachable) : loaded.slice();
  const counts: LoadCounts = { toolsLoaded: 0, redundantLoads: 0, unknownToolNames: [] };
  let stepDefined: string[] = [];

  const unknown = (name: string): void => {
    if (name && !counts.unknownToolNames.includes(name)) counts.unknownToolNames.push(name);
  };
  const definitionsOf = (names: readonly string[]): ToolDefinition[] =>
    names.map((name) => definitions.get(name)).filter((tool): tool is ToolDefinition => tool !== undefined);
  const touch = (name: string): void => {
    const at = recency.indexOf(name);
    if (at >= 0) recency.splice(at, 1);
    recency.push(name);
  };
  const load = (names: readonly string[]): { fresh: string[]; already: string[] } => {
    const fresh: string[] = [];
    const already: string[] = [];
    for (const name of names) {
      if (loaded.includes(name)) already.push(name);
      else {
        loaded.push(name);
        fresh.push(name);
      }
      touch(name);
    }
    counts.toolsLoaded += fresh.length;
    counts.redundantLoads += already.length;
    return { fresh, already };
  };
  const tally = (resolution: LoadResolution): void => {
    for (const name of resolution.unknown) unknown(name);
  };
  const proxyAnswer = (resolution: LoadResolution, transcript: readonly Message[]): string => {
    const defined = [...definedTools(transcript), ...stepDefined];
    const text = proxyLoadResult(resolution, [...definitions.values()], defined);
    for (const name of resolution.names) {
      if (defined.includes(name)) counts.redundantLoads += 1;
      else if (definitions.has(name)) {
        counts.toolsLoaded += 1;
        stepDefined.push(name);
      }
    }
    tally(resolution);
    return text;
  };

  return {
    mode,
    definitions,
    catalog: held,
    loadable,
    loaded,
    counts,
    head(shortlist) {
      if (shortlist && shortlist.length > 0 && mode !== "proxy") return { system, tools: definitionsOf(shortlist) };
      // With nothing to load there is no catalogue and no meta-tool to declare.
      if (mode === "proxy") return { system: fullSystem, tools: loadable.length > 0 ? [...PROXY_TOOLS] : [] };
      if (mode === "ondemand") return { system: fullSystem, tools: [...(loadable.length > 0 ? [LOAD_TOOLS] : []), ...definitionsOf(loaded)] };
      return { system, tools: [...definitions.values()] };
    },
    knownNames() {
      const names = new Set<string>([...definitions.keys(), ...loadable]);
      if (mode !== "eager") {
        names.add(LOAD_TOOLS_NAME);
        names.add(CALL_TOOL_NAME);
      }
      return [...names];
    },
    loadShortlist(names) {
      load(names.filter((name) => definitions.has(name)));
    },
    proxyShortlist(names, transcript) {
      return proxyAnswer(expandNames({ names: [...names] }, held, Math.max(names.length, 1)), transcript);
    },
    route(read, transcript) {
      const request = read.request;
      const name = request.name;
      if (name === LOAD_TOOLS_NAME && mode !== "eager" && !definitions.has(name)) {
        const resolution = expandNames(request.args, held);
        if (mode === "proxy") {
          const content = proxyAnswer(resolution, transcript);
          return { kind: "answer", ok: resolution.names.length > 0, content };
        }
        const have = loaded.slice();
        load(resolution.names);
        tally(resolution);
        return { kind: "answer", ok: resolution.names.length > 0, content: loadResult(resolution, have) };
      }
      if (name === CALL_TOOL_NAME && mode !== "eager" && !definitions.has(name)) {
        const inner = proxiedCall(request.args, loadable);
        if (!inner.ok) {
          const asked = (request.args as { name?: unknown }).name;
          if (typeof asked === "string" && !loadableSet.has(asked)) unknown(asked);
          return { kind: "answer", ok: false, content: inner.message };
        }
        return { kind: "dispatch", request: { id: request.id, name: inner.name, args: inner.args, raw: inner.raw } };
      }
      if (definitions.has(name)) {
        if (mode === "eager" || loaded.includes(name)) return { kind: "dispatch", request };
        if (loadableSet.has(name)) {
          // Called before it was loaded: the model is right about what it wants.
          if (mode === "ondemand") load([name]);
          return { kind: "dispatch", request };
        }
        // Declared through a shortlist but not in the catalogue.
        return { kind: "dispatch", request };
      }
      unknown(name);
      const hint =
        mode === "eager"
          ? definitions.size > 0
            ? ` The tools are: ${[...definitions.keys()].slice(0, 50).join(", ")}.`
            : " This run has no tools."
          : ` Load a tool from the catalogue with ${LOAD_TOOLS_NAME} first.`;
      return { kind: "answer", ok: false, content: `There is no tool named "${name}".${hint}` };
    },
    endStep() {
      stepDefined = [];
    },
    touch,
    carried() {
      return mode === "ondemand" ? carryOver(recency) : [];
    },
    saved() {
      return { loaded: loaded.slice(), recent: recency.slice() };
    },
  };
}
