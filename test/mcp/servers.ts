/**
 * The real MCP servers the mcp tests run, from npm (`@modelcontextprotocol/server-everything` and
 * `@modelcontextprotocol/server-filesystem`, dev dependencies), started over stdio by the test
 * with this Node, and a loop harness against the loopback endpoint.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { McpStdioServer } from "../../src/mcp.js";
import { createRuntime, type Runtime } from "../../src/runtime.js";
import type { AgentLoopOptions, AgentLoopResult } from "../../src/index.js";
import { startEndpoint, type EndpointServer, type Scripted } from "../support/endpoint.js";

const bin = resolve(import.meta.dirname, "../../node_modules/.bin");

/** The everything reference server over stdio, its stderr dropped. */
export function everythingServer(): McpStdioServer {
  return { command: process.execPath, args: [realpathSync(join(bin, "mcp-server-everything")), "stdio"], stderr: "ignore" };
}

/** The filesystem server over stdio, allowed into `folder`, its stderr dropped. */
export function filesystemServer(folder: string): McpStdioServer {
  return { command: process.execPath, args: [realpathSync(join(bin, "mcp-server-filesystem")), folder], stderr: "ignore" };
}

/** A scratch folder with two notes and a subfolder, removed by `remove()`. */
export function scratchFolder(): { path: string; remove(): void } {
  const path = realpathSync(mkdtempSync(join(tmpdir(), "agent-core-mcp-")));
  writeFileSync(join(path, "notes.txt"), "Buy oat milk.\nCall the plumber on Tuesday.\n");
  writeFileSync(join(path, "todo.md"), "# Todo\n- water the plants\n");
  mkdirSync(join(path, "archive"));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** A loopback endpoint and an isolated runtime to run loops against it. */
export interface LoopHarness {
  server: EndpointServer;
  run(options: Omit<AgentLoopOptions, "config"> & { config?: Partial<AgentLoopOptions["config"]> }, ...script: Scripted[]): Promise<AgentLoopResult>;
  close(): Promise<void>;
}

/** Starts the loopback endpoint; each run scripts its turns first. */
export async function loopHarness(): Promise<LoopHarness> {
  const server = await startEndpoint({ profile: "llama.cpp" });
  const runtime: Runtime = createRuntime();
  return {
    server,
    run: ({ config, ...options }, ...script) => {
      server.script(...script);
      return runtime.runAgentLoop({ config: { baseUrl: server.baseUrl, model: "loopback-model", maxToolIterations: 8, maxRetries: 0, ...config }, ...options });
    },
    close: async () => {
      runtime.reset();
      await server.close();
    },
  };
}
