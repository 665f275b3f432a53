/**
 * mcpToolset against servers built with the SDK's own McpServer and Server, connected to a real
 * SDK Client over its in-memory transport: a list change the test makes happen when it wants,
 * two servers with one tool name, a server that refuses, pages and failures of the listing.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { mcpToolset, McpServerError, type McpToolset } from "../../src/mcp.js";
import type { ToolCallRequest, ToolDefinition } from "../../src/index.js";
import { turn } from "../support/endpoint.js";
import { loopHarness } from "./servers.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

async function connect(server: McpServer | Server): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "test", version: "1" });
  await client.connect(clientSide);
  closers.push(async () => {
    await client.close();
    await server.close();
  });
  return client;
}

function demoServer(name = "demo"): McpServer {
  return new McpServer({ name, version: "1.0.0", title: `The ${name} server` }, { capabilities: { tools: { listChanged: true } } });
}

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });
const call = (name: string, args: Record<string, unknown> = {}): ToolCallRequest => ({ id: "c", name, args, raw: JSON.stringify(args) });
const signal = new AbortController().signal;
const names = (set: McpToolset) => set.tools.map((tool) => tool.function.name);

/** Waits until the toolset's tools read as `expected`, as list changes land. */
async function until(set: McpToolset, expected: string[]): Promise<void> {
  for (let tries = 0; tries < 200 && JSON.stringify(names(set)) !== JSON.stringify(expected); tries += 1)
    await new Promise((resolve) => setTimeout(resolve, 10));
  expect(names(set)).toEqual(expected);
}

describe("mcpToolset", () => {
  it("follows tools/list_changed: seen tools keep their place, new ones come after, gone ones go", async () => {
    const server = demoServer();
    const alpha = server.registerTool("alpha", { description: "First." }, async () => text("a"));
    const beta = server.registerTool("beta", { description: "Second." }, async () => text("b"));
    const client = await connect(server);
    const changes: string[][] = [];
    const set = await mcpToolset({ demo: client }, { onChange: (changed) => changes.push(names(changed)) });
    expect(names(set)).toEqual(["alpha", "beta"]);
    expect(set.catalog).toEqual([
      {
        name: "demo",
        label: "The demo server",
        tools: [
          { name: "alpha", description: "First." },
          { name: "beta", description: "Second." },
        ],
      },
    ]);

    server.registerTool("gamma", { description: "Third.", inputSchema: { n: z.number() } }, async ({ n }) => text(`gamma ${n}`));
    alpha.remove();
    beta.update({ description: "Second, now longer.\nWith a second line." });
    await until(set, ["beta", "gamma"]);
    expect(set.catalog[0]!.tools).toEqual([
      { name: "beta", description: "Second, now longer." },
      { name: "gamma", description: "Third." },
    ]);
    expect(set.tools[1]!.function.parameters).toMatchObject({ type: "object", properties: { n: { type: "number" } }, required: ["n"] });
    expect(await set.dispatch(call("gamma", { n: 4 }), signal)).toEqual({ content: "gamma 4", isError: false });
    expect(changes.at(-1)).toEqual(["beta", "gamma"]);

    server.registerTool("alpha", { description: "Back." }, async () => text("a again"));
    await until(set, ["beta", "gamma", "alpha"]);
    set.dispose();
  });

  it("hands the next run the changed tools, in the order the model first saw them", async () => {
    const server = demoServer();
    server.registerTool("zulu", { description: "Z." }, async () => text("z"));
    const client = await connect(server);
    const set = await mcpToolset({ demo: client });
    const loop = await loopHarness();
    try {
      await loop.run({ messages: [{ role: "user", content: "hi" }], toolOrder: false, ...set }, turn({ content: "one" }));
      server.registerTool("alpha", { description: "A." }, async () => text("a"));
      await until(set, ["zulu", "alpha"]);
      await loop.run(
        { messages: [{ role: "user", content: "hi" }], toolOrder: false, ...set },
        turn({ toolCalls: [{ id: "call_0", name: "alpha", arguments: {} }] }),
        turn({ content: "two" }),
      );
      const declared = loop.server.chatBodies().map((body) => (body.tools as ToolDefinition[]).map((tool) => tool.function.name));
      expect(declared).toEqual([["zulu"], ["zulu", "alpha"], ["zulu", "alpha"]]);
      expect(loop.server.chatBodies()[2]!.messages).toContainEqual({ role: "tool", tool_call_id: "call_0", content: "a" });
    } finally {
      set.dispose();
      await loop.close();
    }
  });

  it("gives a name two servers share to the first, and the second's tool its server's name in front", async () => {
    const web = demoServer("web");
    web.registerTool("search", { description: "Searches the web." }, async () => text("from the web"));
    web.registerTool("ns.lookup", { description: "Looks up." }, async () => text("looked up"));
    const docs = demoServer("docs");
    docs.registerTool("search", { description: "Searches the docs." }, async () => text("from the docs"));
    const notices: string[] = [];
    const set = await mcpToolset(
      { web: await connect(web), docs: { client: await connect(docs), label: "Our docs" } },
      { onNotice: (line) => notices.push(line) },
    );
    expect(names(set)).toEqual(["search", "ns_lookup", "docs_search"]);
    expect(set.catalog.map((server) => [server.name, server.label])).toEqual([
      ["web", "The web server"],
      ["docs", "Our docs"],
    ]);
    expect(await set.dispatch(call("search"), signal)).toEqual({ content: "from the web", isError: false });
    expect(await set.dispatch(call("docs_search"), signal)).toEqual({ content: "from the docs", isError: false });
    expect(await set.dispatch(call("ns_lookup"), signal)).toEqual({ content: "looked up", isError: false });
    expect(notices).toEqual([
      'The tool "ns.lookup" of the MCP server "web" is offered to the model as "ns_lookup".',
      'The tool "search" of the MCP server "docs" is offered to the model as "docs_search".',
    ]);
    set.dispose();
  });

  it("puts the server's name in front of every tool with prefix: true", async () => {
    const web = demoServer("web");
    web.registerTool("search", {}, async () => text("w"));
    const set = await mcpToolset({ web: await connect(web) }, { prefix: true });
    expect(names(set)).toEqual(["web_search"]);
    expect(await set.dispatch(call("web_search"), signal)).toEqual({ content: "w", isError: false });
    set.dispose();
  });

  it("fails a call the server refuses with a protocol error as McpServerError, the server's words included", async () => {
    const server = new Server({ name: "low", version: "1" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: "strict", inputSchema: { type: "object" } }] }));
    server.setRequestHandler(CallToolRequestSchema, async () => {
      throw new McpError(ErrorCode.InvalidParams, "strict wants a ticket");
    });
    const set = await mcpToolset({ low: await connect(server) });
    const error = await Promise.resolve(set.dispatch(call("strict"), signal)).catch((caught: unknown) => caught);
    expect(McpServerError.is(error)).toBe(true);
    expect(error).toMatchObject({
      server: "low",
      tool: "strict",
      problem: "refused",
      message: 'The MCP server "low" refused the call to strict: MCP error -32602: strict wants a ticket',
    });
    set.dispose();
  });

  it("reads every page of a listing", async () => {
    const server = new Server({ name: "paged", version: "1" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async (request) =>
      request.params?.cursor === "2"
        ? { tools: [{ name: "three", inputSchema: { type: "object" } }] }
        : {
            tools: [
              { name: "one", inputSchema: { type: "object" } },
              { name: "two", inputSchema: { type: "object" } },
            ],
            nextCursor: "2",
          },
    );
    const set = await mcpToolset({ paged: await connect(server) });
    expect(names(set)).toEqual(["one", "two", "three"]);
    set.dispose();
  });

  it("refuses to build from a server whose tools cannot be listed, naming it", async () => {
    const server = new Server({ name: "broken", version: "1" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      throw new McpError(ErrorCode.InternalError, "the index is gone");
    });
    const error = await mcpToolset({ broken: await connect(server) }).catch((caught: unknown) => caught);
    expect(McpServerError.is(error)).toBe(true);
    expect(error).toMatchObject({
      server: "broken",
      problem: "list",
      message: 'The MCP server "broken" did not list its tools: MCP error -32603: the index is gone',
    });
  });

  it("keeps the tools it had when a later listing fails, and says so", async () => {
    let failing = false;
    const server = new Server({ name: "flaky", version: "1" }, { capabilities: { tools: { listChanged: true } } });
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      if (failing) throw new McpError(ErrorCode.InternalError, "busy");
      return { tools: [{ name: "steady", inputSchema: { type: "object" } }] };
    });
    const notices: string[] = [];
    const set = await mcpToolset({ flaky: await connect(server) }, { onNotice: (line) => notices.push(line) });
    failing = true;
    await server.sendToolListChanged();
    for (let tries = 0; tries < 200 && notices.length === 0; tries += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(notices).toEqual(['The tools of the MCP server "flaky" could not be listed again (MCP error -32603: busy); the ones listed before stay.']);
    expect(names(set)).toEqual(["steady"]);
    set.dispose();
  });

  it("says a server whose connection closed is not connected, and keeps its tools listed", async () => {
    const server = demoServer();
    server.registerTool("alpha", {}, async () => text("a"));
    const client = await connect(server);
    let hostHeard = false;
    client.onclose = () => {
      hostHeard = true;
    };
    const set = await mcpToolset({ demo: client });
    await client.close();
    expect(hostHeard).toBe(true);
    expect(set.servers).toEqual([{ name: "demo", label: "The demo server", connected: false, tools: ["alpha"] }]);
    const error = await Promise.resolve(set.dispatch(call("alpha"), signal)).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ problem: "closed", message: 'The MCP server "demo" is not connected (its connection closed), so alpha could not be run.' });
    expect(names(set)).toEqual(["alpha"]);
  });

  it("stops following list changes once disposed, and gives the client its own onclose back", async () => {
    const server = demoServer();
    server.registerTool("alpha", {}, async () => text("a"));
    const client = await connect(server);
    const own = () => undefined;
    client.onclose = own;
    const set = await mcpToolset({ demo: client });
    set.dispose();
    expect(client.onclose).toBe(own);
    server.registerTool("beta", {}, async () => text("b"));
    await client.listTools(); // the list change has reached the client by the time this answers
    await set.refresh();
    expect(names(set)).toEqual(["alpha"]);
  });

  it("lists again on refresh()", async () => {
    const server = new Server({ name: "quiet", version: "1" }, { capabilities: { tools: {} } });
    const listed = [{ name: "one", inputSchema: { type: "object" as const } }];
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
    const set = await mcpToolset({ quiet: await connect(server) });
    listed.push({ name: "two", inputSchema: { type: "object" } });
    await set.refresh();
    expect(names(set)).toEqual(["one", "two"]);
    set.dispose();
  });

  it.each([
    ["null", null, "mcpToolset: expected an object of connected MCP clients by server name, got null."],
    ["a list", [], "mcpToolset: expected an object of connected MCP clients by server name, got an array."],
    ["a server that is not a client", { x: { url: "http://x" } }, 'mcpToolset: the server "x" is neither a connected MCP Client nor { client, label }.'],
  ])("refuses %s with a TypeError naming it", async (_, servers, message) => {
    await expect(mcpToolset(servers as never)).rejects.toThrow(TypeError);
    await expect(mcpToolset(servers as never)).rejects.toThrow(message);
  });
});
