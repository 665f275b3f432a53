/**
 * @module mcp/connect
 * connectMcpServers: MCP servers described the way `.mcp.json` describes them, started or
 * connected to, and handed back as one toolset that closes them all.
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport, type StreamableHTTPClientTransportOptions } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { McpServerError } from "./errors.js";
import { mcpToolset, type McpToolset, type McpToolsetOptions } from "./toolset.js";

/** A server run as a child process that speaks MCP over its stdin and stdout. */
export interface McpStdioServer {
  /** The transport; absent reads as stdio where `command` is given. */
  type?: "stdio" | undefined;
  /** The program to run. */
  command: string;
  /** Its arguments. */
  args?: string[] | undefined;
  /** Variables added to the SDK's safe default environment. */
  env?: Record<string, string> | undefined;
  /** The folder to run it in. @default this process's */
  cwd?: string | undefined;
  /** What happens to its stderr. @default "inherit" */
  stderr?: "inherit" | "ignore" | "pipe" | undefined;
  /** Said beside the server's name in the catalogue. @default the server's own title or name */
  label?: string | undefined;
}

/** A remote server reached over streamable HTTP. */
export interface McpHttpServer {
  /** The transport; absent reads as http where `url` is given. */
  type?: "http" | undefined;
  /** The server's MCP endpoint. */
  url: string | URL;
  /** Headers sent with every request (an authorization header, say). */
  headers?: Record<string, string> | undefined;
  /** Said beside the server's name in the catalogue. @default the server's own title or name */
  label?: string | undefined;
}

/** One server to connect to, as `.mcp.json` spells it: a command to run, or a URL. */
export type McpServerConfig = McpStdioServer | McpHttpServer;

/** Options for {@link connectMcpServers}: the toolset's, and how this client introduces itself. */
export interface ConnectMcpOptions extends McpToolsetOptions {
  /** The name and version the client gives each server. @default { name: "agent-core", version: "0" } */
  clientInfo?: { name: string; version: string } | undefined;
}

/** The toolset of servers {@link connectMcpServers} started or connected to, which it closes. */
export interface McpConnection extends McpToolset {
  /** The connected clients by server name, for anything beyond tools (resources, prompts). */
  readonly clients: Readonly<Record<string, Client>>;
  /** Stops listening and closes every client, ending the processes it started. */
  close(): Promise<void>;
}

function transportFor(name: string, config: unknown): Transport {
  if (typeof config !== "object" || config === null)
    throw new TypeError(`connectMcpServers: the server "${name}" must be { command, args } or { url }, not ${config === null ? "null" : typeof config}.`);
  const given = config as Partial<McpStdioServer & McpHttpServer> & { type?: unknown };
  if (given.type === "sse")
    throw new TypeError(`connectMcpServers: the server "${name}" is of type "sse", which is not supported; use its streamable HTTP endpoint ({ url }).`);
  if (given.type !== undefined && given.type !== "stdio" && given.type !== "http")
    throw new TypeError(`connectMcpServers: the server "${name}" has type ${JSON.stringify(given.type)}; use "stdio" or "http".`);
  if (given.type === "stdio" || (given.type === undefined && given.command !== undefined)) {
    if (typeof given.command !== "string" || given.command.trim() === "")
      throw new TypeError(`connectMcpServers: the server "${name}" needs a command to run (a non-empty string).`);
    if (given.args !== undefined && (!Array.isArray(given.args) || !given.args.every((arg) => typeof arg === "string")))
      throw new TypeError(`connectMcpServers: the args of the server "${name}" must be a list of strings.`);
    return new StdioClientTransport({
      command: given.command,
      ...(given.args ? { args: given.args } : {}),
      ...(given.env ? { env: given.env } : {}),
      ...(given.cwd ? { cwd: given.cwd } : {}),
      ...(given.stderr ? { stderr: given.stderr } : {}),
    });
  }
  if (given.url === undefined) throw new TypeError(`connectMcpServers: the server "${name}" needs a command (stdio) or a url (streamable HTTP).`);
  let url: URL;
  try {
    url = new URL(given.url);
  } catch (error) {
    throw new TypeError(`connectMcpServers: the url of the server "${name}" is not a URL: ${JSON.stringify(String(given.url))}.`, { cause: error });
  }
  const options: StreamableHTTPClientTransportOptions = given.headers ? { requestInit: { headers: given.headers } } : {};
  return new StreamableHTTPClientTransport(url, options);
}

/**
 * Starts or connects to MCP servers described as `.mcp.json` describes them and builds one toolset of all their tools.
 *
 * Each entry is `{ command, args?, env?, cwd? }` for a server run over stdio or `{ url,
 * headers? }` for streamable HTTP, under the name the catalogue and errors use. The servers
 * connect side by side; where one cannot, the others are closed again and an McpServerError
 * (`connect`) names it. The result is {@link mcpToolset}'s over the new clients, plus `clients`
 * and `close()`, which stops listening and closes every client (ending the processes started).
 * Throws a TypeError, naming the server, for an entry that is neither shape.
 *
 * @param servers - The servers by name.
 * @param options - The toolset's options and the client's name.
 * @example
 * ```ts
 * const mcp = await connectMcpServers({
 *   files: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."] },
 * });
 * try {
 *   await runAgentLoop({ config: { ...config, toolDiscovery: "proxy" }, messages, ...mcp });
 * } finally {
 *   await mcp.close();
 * }
 * ```
 */
export async function connectMcpServers(servers: Readonly<Record<string, McpServerConfig>>, options: ConnectMcpOptions = {}): Promise<McpConnection> {
  if (typeof servers !== "object" || servers === null || Array.isArray(servers)) {
    throw new TypeError(
      `connectMcpServers: expected an object of servers by name, got ${Array.isArray(servers) ? "an array" : servers === null ? "null" : typeof servers}.`,
    );
  }
  const planned = Object.entries(servers).map(([name, config]) => ({ name, config, transport: transportFor(name, config) }));
  const info = options.clientInfo && typeof options.clientInfo.name === "string" ? options.clientInfo : { name: "agent-core", version: "0" };
  const clients: Record<string, Client> = {};
  const connected = await Promise.allSettled(
    planned.map(async ({ name, transport }) => {
      const client = new Client(info, { capabilities: {} });
      clients[name] = client;
      await client.connect(transport);
    }),
  );
  const closeAll = () => Promise.allSettled(Object.values(clients).map((client) => client.close())).then(() => undefined);
  const failed = connected.findIndex((outcome) => outcome.status === "rejected");
  if (failed >= 0) {
    await closeAll();
    throw new McpServerError({ server: planned[failed]!.name, problem: "connect", cause: (connected[failed] as PromiseRejectedResult).reason });
  }
  const entries = Object.fromEntries(
    planned.map(({ name, config }) => {
      const label = (config as { label?: unknown }).label;
      return [name, typeof label === "string" ? { client: clients[name]!, label } : clients[name]!];
    }),
  );
  let toolset: McpToolset;
  try {
    toolset = await mcpToolset(entries, options);
  } catch (error) {
    await closeAll();
    throw error;
  }
  return Object.defineProperties(toolset as McpConnection, {
    clients: { value: Object.freeze({ ...clients }) },
    close: {
      value: async (): Promise<void> => {
        toolset.dispose();
        await closeAll();
      },
    },
  });
}
