/**
 * @module mcp/errors
 * McpServerError: what went wrong with one MCP server, naming it, the tool where there is one,
 * and what happened.
 */

import { AgentCoreError, errorMessage, type AgentCoreErrorOptions } from "../index.js";

/** What went wrong with an MCP server. */
export type McpProblem =
  /** It could not be started or connected to. */
  | "connect"
  /** Its tools could not be listed. */
  | "list"
  /** Its connection closed: before the call, or while the call was waiting for its answer. */
  | "closed"
  /** It did not answer the call in time. */
  | "timeout"
  /** It answered the call with a protocol error (unknown tool, invalid arguments …). */
  | "refused"
  /** The call failed some other way. */
  | "failed";

/** Options for an {@link McpServerError}. */
export interface McpServerErrorOptions extends AgentCoreErrorOptions {
  /** The server's name, as the host named it. */
  server: string;
  /** What went wrong. */
  problem: McpProblem;
  /** The tool, by the MCP server's own name, where a call went wrong. */
  tool?: string | undefined;
}

/**
 * What an error from the SDK says, on one line: the SDK writes "MCP error <code>: " in front of a
 * message that may already start with it, and that repeat is said once.
 */
export function mcpDetail(error: unknown): string {
  const text = errorMessage(error);
  return text === "Unknown error" && error === undefined ? "" : text.replace(/^(MCP error -?\d+: )(?:\1)+/, "$1");
}

function wording(options: McpServerErrorOptions): string {
  const server = `The MCP server "${options.server}"`;
  const tool = options.tool ?? "the tool";
  const detail = mcpDetail(options.cause);
  switch (options.problem) {
    case "connect":
      return `${server} could not be connected to${detail ? `: ${detail}` : "."}`;
    case "list":
      return `${server} did not list its tools${detail ? `: ${detail}` : "."}`;
    case "closed":
      return `${server} is not connected (its connection closed), so ${tool} could not be run.`;
    case "timeout":
      return `${server} did not answer the call to ${tool} in time${detail ? ` (${detail})` : ""}.`;
    case "refused":
      return `${server} refused the call to ${tool}${detail ? `: ${detail}` : "."}`;
    default:
      return `The call to ${tool} on the MCP server "${options.server}" failed${detail ? `: ${detail}` : "."}`;
  }
}

/**
 * An MCP server could not be reached, listed or called: the server, the tool and what happened.
 *
 * Thrown by a toolset's dispatch, it is what the model reads as the call's failed result (the
 * run goes on); thrown by connectMcpServers or mcpToolset, it names the server that could not be
 * started or listed.
 */
export class McpServerError extends AgentCoreError {
  override readonly name = "McpServerError" as const;
  /** The server's name, as the host named it. */
  readonly server: string;
  /** What went wrong. */
  readonly problem: McpProblem;
  /** The tool, by the MCP server's own name, where a call went wrong. */
  readonly tool?: string | undefined;

  static {
    AgentCoreError.mark(this, "McpServerError");
  }

  /** Makes the error for `problem` on `server`. */
  constructor(options: McpServerErrorOptions) {
    super({ message: options.message ?? wording(options), cause: options.cause });
    this.server = options.server;
    this.problem = options.problem;
    if (options.tool !== undefined) this.tool = options.tool;
  }

  /** Tells an McpServerError from anything else, also one from another copy of this package. */
  static override is(value: unknown): value is McpServerError {
    return AgentCoreError.isNamed(value, "McpServerError", "server");
  }
}
