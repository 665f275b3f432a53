/**
 * @module mcp
 * `@cubicecho/agent-core/mcp`: MCP servers as the `tools`, `catalog` and `dispatch` runAgentLoop
 * takes, in one call, on the official `@modelcontextprotocol/sdk` (an optional peer dependency).
 *
 * - {@link connectMcpServers} starts (stdio) or connects to (streamable HTTP) servers described
 *   the way `.mcp.json` describes them, and hands back one toolset with `close()`.
 * - {@link mcpToolset} does the same for clients the host has already connected.
 *
 * Either result spreads into runAgentLoop's options in every discovery mode: eager declares
 * every tool, ondemand and proxy list them in the catalogue (one server per MCP server, one line
 * per tool). Calls are routed to their server with the call's signal; content blocks become the
 * tool message's text, `isError` its failure, and a server that fails or goes away fails that
 * call with a sentence saying so while the run goes on. A server's `tools/list_changed` is
 * followed without reordering what the model has already seen.
 *
 * @example
 * ```ts
 * import { runAgentLoop } from "@cubicecho/agent-core";
 * import { connectMcpServers } from "@cubicecho/agent-core/mcp";
 *
 * const mcp = await connectMcpServers({ files: { command: "mcp-server-filesystem", args: ["."] } });
 * try {
 *   const { turn } = await runAgentLoop({ config, messages, ...mcp });
 * } finally {
 *   await mcp.close();
 * }
 * ```
 */

export { connectMcpServers } from "./mcp/connect.js";
export type { ConnectMcpOptions, McpConnection, McpHttpServer, McpServerConfig, McpStdioServer } from "./mcp/connect.js";
export { mcpToolset } from "./mcp/toolset.js";
export type { McpClient, McpServerEntry, McpServerStatus, McpToolset, McpToolsetOptions } from "./mcp/toolset.js";
export { readMcpResult } from "./mcp/content.js";
export type { McpResultText } from "./mcp/content.js";
export { McpServerError } from "./mcp/errors.js";
export type { McpProblem, McpServerErrorOptions } from "./mcp/errors.js";
