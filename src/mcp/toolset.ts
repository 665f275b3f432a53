/**
 * @module mcp/toolset
 * mcpToolset: connected MCP clients as the `tools`, `catalog` and `dispatch` runAgentLoop takes,
 * kept up to date when a server says its tool list changed.
 */

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { ToolNotFound, type CatalogServer, type Dispatch, type ToolDefinition, type Toolset } from "../index.js";
import { readMcpResult } from "./content.js";
import { mcpDetail, McpServerError } from "./errors.js";
import { createToolNames } from "./names.js";

/** The part of an MCP SDK `Client` a toolset uses; any connected `Client` is one. */
export type McpClient = Pick<Client, "listTools" | "callTool" | "setNotificationHandler" | "removeNotificationHandler" | "getServerVersion"> & {
  onclose?: (() => void) | undefined;
};

/** A connected server as {@link mcpToolset} takes it: the client, and a label for the catalogue. */
export interface McpServerEntry {
  /** A connected MCP client. */
  client: McpClient;
  /** Said beside the server's name in the catalogue. @default the server's own title or name */
  label?: string | undefined;
}

/** Options for {@link mcpToolset}. */
export interface McpToolsetOptions {
  /** Offer every tool as `<server>_<tool>` rather than under its own name. @default false */
  prefix?: boolean | undefined;
  /** How long a call may wait for its answer, in milliseconds. @default the SDK's 60000 */
  timeoutMs?: number | undefined;
  /** Told after a server's list change has changed the tools, with the toolset as it now stands. */
  onChange?: ((toolset: McpToolset) => unknown) | undefined;
  /** Told each notice: a tool renamed or left out, a server that closed, a refresh that failed. */
  onNotice?: ((text: string) => unknown) | undefined;
}

/** One server of a toolset as it now stands. */
export interface McpServerStatus {
  /** The server's name, as the host named it. */
  name: string;
  /** The label the catalogue says beside it. */
  label?: string | undefined;
  /** False once its connection has closed. */
  connected: boolean;
  /** The names its tools are offered under, in the order the model first saw them. */
  tools: string[];
}

/**
 * MCP servers as a toolset: spread it into runAgentLoop's options for `tools`, `catalog` and
 * `dispatch`; the rest is not enumerable, so a spread copies only those three.
 */
export interface McpToolset extends Toolset {
  /** Each server as it now stands, in the order given. */
  readonly servers: McpServerStatus[];
  /** Lists every server's tools again now; resolves once the lists are in (nothing, once disposed). */
  refresh(): Promise<void>;
  /** Stops following list changes and closed connections, freezing the tools as they stand; the clients stay open and are the host's. */
  dispose(): void;
}

interface HeldTool {
  mcpName: string;
  name: string;
  definition: ToolDefinition;
  line: string;
}

interface ServerState {
  name: string;
  label?: string | undefined;
  client: McpClient;
  connected: boolean;
  tools: HeldTool[];
  skipped: Set<string>;
  refreshing?: Promise<void> | undefined;
  again: boolean;
  onclose: (() => void) | undefined;
}

type ListedTool = Awaited<ReturnType<McpClient["listTools"]>>["tools"][number];

function firstLine(text: unknown): string {
  return typeof text === "string" ? (text.trim().split("\n", 1)[0] ?? "").trim() : "";
}

function isClient(value: unknown): value is McpClient {
  return (
    typeof value === "object" && value !== null && typeof (value as McpClient).callTool === "function" && typeof (value as McpClient).listTools === "function"
  );
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

async function listAll(client: McpClient): Promise<ListedTool[]> {
  const all: ListedTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page += 1) {
    const listed = await client.listTools(cursor ? { cursor } : undefined);
    all.push(...listed.tools);
    cursor = listed.nextCursor;
    if (!cursor) break;
  }
  return all;
}

function parametersOf(tool: ListedTool): Record<string, unknown> {
  const schema: Record<string, unknown> =
    tool.inputSchema && typeof tool.inputSchema === "object" ? { ...(tool.inputSchema as Record<string, unknown>) } : { type: "object", properties: {} };
  delete schema.$schema;
  return schema;
}

function entriesOf(servers: unknown): Array<[string, McpServerEntry]> {
  if (typeof servers !== "object" || servers === null || Array.isArray(servers)) {
    throw new TypeError(
      `mcpToolset: expected an object of connected MCP clients by server name, got ${Array.isArray(servers) ? "an array" : servers === null ? "null" : typeof servers}.`,
    );
  }
  return Object.entries(servers).map(([name, value]) => {
    const entry = isClient(value) ? { client: value } : (value as McpServerEntry);
    if (!entry || typeof entry !== "object" || !isClient(entry.client)) {
      throw new TypeError(`mcpToolset: the server "${name}" is neither a connected MCP Client nor { client, label }.`);
    }
    return [name, entry];
  });
}

/**
 * Builds a toolset from connected MCP clients: one catalogue server each, their tools, and a dispatch that routes each call to its server.
 *
 * `servers` names each client (the name the catalogue and errors use); the value is a connected
 * SDK `Client`, stdio or streamable HTTP alike, or `{ client, label }`. Every tool is offered
 * under its own name where an OpenAI-compatible server takes it and no earlier tool has it, and
 * otherwise rewritten (`<server>_<tool>`, cleaned), with a notice. Its schema is the server's
 * `inputSchema`, which each request sanitizes or relaxes for what the endpoint takes; a tool
 * that requires task-based execution is left out, with a notice.
 *
 * A call goes to its server with the call's signal and `timeoutMs`; the result's content blocks
 * become the tool message's text (see readMcpResult) and `isError` its failure. A server that
 * cannot be reached, refuses the call or times out makes dispatch throw an McpServerError
 * saying so, which the model reads as the failed result while the run goes on; a server whose
 * connection closed keeps its tools listed (the request head does not change) and answers each
 * call that way. When a server sends `notifications/tools/list_changed` its tools are listed
 * again: tools the model has seen keep their place, new ones are added after them, gone ones
 * are dropped, and the next read of `tools` and `catalog` (the next run) sees the change.
 *
 * Installs each client's `tools/list_changed` handler and wraps its `onclose`; `dispose()` puts
 * them back. Throws a TypeError for a value that is not a client, and an McpServerError
 * (`list`) for a server whose tools cannot be listed.
 *
 * @param servers - Connected MCP clients by server name.
 * @param options - `prefix`, `timeoutMs`, `onChange` and `onNotice`.
 * @example
 * ```ts
 * const tools = await mcpToolset({ files: filesClient, search: searchClient });
 * const result = await runAgentLoop({ config, messages, ...tools });
 * ```
 */
export async function mcpToolset(servers: Readonly<Record<string, McpClient | McpServerEntry>>, options: McpToolsetOptions = {}): Promise<McpToolset> {
  const states: ServerState[] = entriesOf(servers).map(([name, entry]) => {
    const version = entry.client.getServerVersion?.();
    const label = typeof entry.label === "string" && entry.label.trim() !== "" ? entry.label.trim() : (version?.title ?? version?.name);
    const state: ServerState = { name, client: entry.client, connected: true, tools: [], skipped: new Set(), again: false, onclose: entry.client.onclose };
    if (label) state.label = label;
    return state;
  });
  const timeout = typeof options.timeoutMs === "number" && options.timeoutMs > 0 ? options.timeoutMs : undefined;
  const notice = (text: string): void => {
    try {
      void options.onNotice?.(text);
    } catch {
      // A listener that throws is not the toolset's failure.
    }
  };
  const names = createToolNames(options.prefix === true, (server, tool, name) =>
    notice(`The tool "${tool}" of the MCP server "${server}" is offered to the model as "${name}".`),
  );
  let disposed = false;
  // A list change that arrives before the first listing is in waits for it, so the two cannot race.
  let ready = false;

  /** Folds a fresh listing into what the model has seen: kept tools in place, new ones after. */
  const merge = (state: ServerState, listed: readonly ListedTool[]): boolean => {
    const usable = listed.filter((tool) => {
      if ((tool.execution as { taskSupport?: unknown } | undefined)?.taskSupport !== "required") return true;
      if (!state.skipped.has(tool.name))
        notice(`The tool "${tool.name}" of the MCP server "${state.name}" needs task-based execution, which a tool call cannot use, so it is left out.`);
      state.skipped.add(tool.name);
      return false;
    });
    const byName = new Map(usable.map((tool) => [tool.name, tool]));
    const held = (tool: ListedTool, name: string): HeldTool => {
      const description = tool.description ?? tool.title;
      const fn: ToolDefinition["function"] = { name, parameters: parametersOf(tool) };
      if (description) fn.description = description;
      return { mcpName: tool.name, name, definition: { type: "function", function: fn }, line: firstLine(description) };
    };
    const next: HeldTool[] = [];
    for (const old of state.tools) {
      const tool = byName.get(old.mcpName);
      if (tool) next.push(held(tool, old.name));
      else names.release(state.name, old.mcpName);
    }
    for (const tool of usable) {
      if (!state.tools.some((old) => old.mcpName === tool.name)) next.push(held(tool, names.nameFor(state.name, tool.name)));
    }
    const changed = !sameJson(next, state.tools);
    state.tools = next;
    return changed;
  };

  const refreshServer = (state: ServerState): Promise<void> => {
    if (state.refreshing) {
      state.again = true;
      return state.refreshing;
    }
    state.refreshing = (async () => {
      let changed = false;
      do {
        state.again = false;
        try {
          if (merge(state, await listAll(state.client))) changed = true;
        } catch (error) {
          notice(`The tools of the MCP server "${state.name}" could not be listed again (${mcpDetail(error)}); the ones listed before stay.`);
        }
      } while (state.again && !disposed);
      state.refreshing = undefined;
      if (changed && !disposed) {
        try {
          void options.onChange?.(toolset);
        } catch {
          // A listener that throws is not the toolset's failure.
        }
      }
    })();
    return state.refreshing;
  };

  const route = new Map<string, { state: ServerState; tool: HeldTool }>();
  const routeOf = (name: string) => {
    route.clear();
    for (const state of states) for (const tool of state.tools) if (!route.has(tool.name)) route.set(tool.name, { state, tool });
    return route.get(name);
  };

  const dispatch: Dispatch = async (request, signal) => {
    const found = routeOf(request.name);
    if (!found)
      throw new ToolNotFound({
        toolName: request.name,
        availableTools: [...route.keys()],
        message: `No connected MCP server offers a tool named "${request.name}".`,
      });
    const { state, tool } = found;
    if (!state.connected) throw new McpServerError({ server: state.name, problem: "closed", tool: tool.mcpName });
    try {
      const result = await state.client.callTool({ name: tool.mcpName, arguments: request.args }, undefined, { signal, ...(timeout ? { timeout } : {}) });
      const read = readMcpResult(result);
      return { content: read.text, isError: !read.ok };
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw callError(state, tool.mcpName, error);
    }
  };

  const callError = (state: ServerState, tool: string, error: unknown): McpServerError => {
    const code = (error as { code?: unknown } | null)?.code;
    const message = mcpDetail(error);
    if (code === -32000 || /^not connected$/i.test(message) || !state.connected) {
      state.connected = false;
      return new McpServerError({
        server: state.name,
        problem: "closed",
        tool,
        cause: error,
        message: `The MCP server "${state.name}" closed its connection before ${tool} answered, so the call failed; its tools cannot be used until it is connected again.`,
      });
    }
    if (code === -32001) return new McpServerError({ server: state.name, problem: "timeout", tool, cause: error });
    if (typeof code === "number") return new McpServerError({ server: state.name, problem: "refused", tool, cause: error });
    return new McpServerError({ server: state.name, problem: "failed", tool, cause: error });
  };

  for (const state of states) {
    state.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (disposed) return;
      if (ready) void refreshServer(state);
      else state.again = true;
    });
    state.client.onclose = () => {
      if (state.connected && !disposed) notice(`The MCP server "${state.name}" closed its connection; calls of its tools fail until it is connected again.`);
      state.connected = false;
      state.onclose?.();
    };
  }
  const dispose = (): void => {
    if (disposed) return;
    disposed = true;
    for (const state of states) {
      state.client.removeNotificationHandler("notifications/tools/list_changed");
      state.client.onclose = state.onclose;
    }
  };

  const listed = await Promise.allSettled(states.map((state) => listAll(state.client)));
  listed.forEach((outcome, index) => {
    if (outcome.status === "fulfilled") merge(states[index]!, outcome.value);
  });
  const failed = listed.findIndex((outcome) => outcome.status === "rejected");
  if (failed >= 0) {
    dispose();
    throw new McpServerError({ server: states[failed]!.name, problem: "list", cause: (listed[failed] as PromiseRejectedResult).reason });
  }

  const toolset = Object.defineProperties({} as McpToolset, {
    tools: { enumerable: true, get: () => states.flatMap((state) => state.tools.map((tool) => tool.definition)) },
    catalog: {
      enumerable: true,
      get: (): CatalogServer[] =>
        states
          .filter((state) => state.tools.length > 0)
          .map((state) => ({
            name: state.name,
            ...(state.label ? { label: state.label } : {}),
            tools: state.tools.map((tool) => (tool.line ? { name: tool.name, description: tool.line } : { name: tool.name })),
          })),
    },
    dispatch: { enumerable: true, value: dispatch },
    servers: {
      get: (): McpServerStatus[] =>
        states.map((state) => ({
          name: state.name,
          ...(state.label ? { label: state.label } : {}),
          connected: state.connected,
          tools: state.tools.map((tool) => tool.name),
        })),
    },
    refresh: { value: async (): Promise<void> => void (disposed ? undefined : await Promise.all(states.map(refreshServer))) },
    dispose: { value: dispose },
  });
  ready = true;
  for (const state of states) if (state.again) void refreshServer(state);
  return toolset;
}
