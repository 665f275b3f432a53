/**
 * The ./mcp entry against real MCP servers from npm, started over stdio by the test: the
 * everything reference server and the filesystem server, in all three discovery modes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { connectMcpServers, McpServerError, type McpConnection } from "../src/mcp.js";
import { AgentLoopError, toolset, defineTool, type Message, type ToolDefinition } from "../src/index.js";
import { STOPPED_DURING_CALL } from "../src/run/run-calls.js";
import { z } from "zod";
import { turn } from "./support/endpoint.js";
import { validateTranscript } from "./support/transcript.js";
import { everythingServer, filesystemServer, loopHarness, scratchFolder, type LoopHarness } from "./mcp/servers.js";

const question: Message[] = [{ role: "user", content: "Add 2 and 3, and read my notes." }];
const toolText = (messages: readonly Message[]) => messages.filter((message) => message.role === "tool").map((message) => message.content as string);

describe("connectMcpServers with the everything and filesystem servers", () => {
  let mcp: McpConnection;
  let loop: LoopHarness;
  let folder: ReturnType<typeof scratchFolder>;
  const notices: string[] = [];

  beforeAll(async () => {
    folder = scratchFolder();
    loop = await loopHarness();
    mcp = await connectMcpServers(
      { everything: everythingServer(), files: { ...filesystemServer(folder.path), label: "The notes folder" } },
      { onNotice: (text) => notices.push(text) },
    );
  });

  afterAll(async () => {
    await mcp?.close();
    await loop?.close();
    folder?.remove();
  });

  it("lists one catalogue server per MCP server, labelled, one line a tool", () => {
    const [everything, files] = mcp.catalog;
    expect(mcp.catalog.map((server) => server.name)).toEqual(["everything", "files"]);
    expect(everything).toMatchObject({ name: "everything", label: "Everything Reference Server" });
    expect(files).toMatchObject({ name: "files", label: "The notes folder" });
    expect(everything!.tools).toEqual(
      expect.arrayContaining([
        { name: "echo", description: "Echoes back the input string" },
        { name: "get-sum", description: "Returns the sum of two numbers" },
      ]),
    );
    expect(files!.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["read_text_file", "list_directory", "write_file"]));
    for (const tool of [...everything!.tools, ...files!.tools]) expect(tool.description ?? "").not.toContain("\n");
  });

  it("declares each tool with the server's input schema, $schema left out, and leaves out a task-only tool with a notice", () => {
    const sum = mcp.tools.find((tool) => tool.function.name === "get-sum")!;
    expect(sum.function.parameters).toEqual({
      type: "object",
      properties: { a: { type: "number", description: "First number" }, b: { type: "number", description: "Second number" } },
      required: ["a", "b"],
    });
    expect(mcp.tools.map((tool) => tool.function.name)).not.toContain("simulate-research-query");
    expect(notices.some((text) => text.includes('"simulate-research-query"') && text.includes("task-based execution"))).toBe(true);
    expect(mcp.servers).toEqual([
      expect.objectContaining({ name: "everything", connected: true }),
      expect.objectContaining({ name: "files", label: "The notes folder", connected: true }),
    ]);
  });

  it("spreads into the loop's options as exactly tools, catalog and dispatch", () => {
    expect(Object.keys({ ...mcp }).sort()).toEqual(["catalog", "dispatch", "tools"]);
  });

  it("runs eager: both servers' tools declared, each call routed to its server, the real outputs in the transcript", async () => {
    const result = await loop.run(
      { messages: question, ...mcp },
      turn({
        toolCalls: [
          { id: "c1", name: "get-sum", arguments: { a: 2, b: 3 } },
          { id: "c2", name: "read_text_file", arguments: { path: join(folder.path, "notes.txt") } },
        ],
      }),
      turn({ content: "5, and you need oat milk." }),
    );
    expect(result.turn.content).toBe("5, and you need oat milk.");
    expect(toolText(result.messages)).toEqual(["The sum of 2 and 3 is 5.", "Buy oat milk.\nCall the plumber on Tuesday.\n"]);
    expect(result.used).toEqual(["get-sum", "read_text_file"]);
    expect(validateTranscript(result.messages)).toEqual([]);
    const declared = (loop.server.chatBodies().at(-2)!.tools as ToolDefinition[]).map((tool) => tool.function.name);
    expect(declared).toEqual(expect.arrayContaining(["echo", "get-sum", "read_text_file", "list_directory"]));
  });

  it("runs ondemand: the catalogue on the system prompt, a tool loaded, then called", async () => {
    const before = loop.server.chatBodies().length;
    const result = await loop.run(
      { config: { toolDiscovery: "ondemand" }, system: "You help.", messages: [{ role: "user", content: "Echo hello." }], ...mcp },
      turn({ toolCalls: [{ id: "l1", name: "load_tools", arguments: { names: ["echo"] } }] }),
      turn({ toolCalls: [{ id: "e1", name: "echo", arguments: { message: "hello" } }] }),
      turn({ content: "It said hello back." }),
    );
    const bodies = loop.server.chatBodies().slice(before);
    const system = (bodies[0]!.messages as Message[])[0]!.content as string;
    expect(system).toContain("everything (Everything Reference Server)\n");
    expect(system).toContain("- echo: Echoes back the input string");
    expect(system).toContain("files (The notes folder)\n");
    expect((bodies[0]!.tools as ToolDefinition[]).map((tool) => tool.function.name)).toEqual(["load_tools"]);
    expect((bodies[1]!.tools as ToolDefinition[]).map((tool) => tool.function.name)).toEqual(["echo", "load_tools"]);
    expect(toolText(result.messages)[1]).toBe("Echo: hello");
    expect(result.loaded).toEqual(["echo"]);
  });

  it("runs proxy: a fixed tool array, the definition in the load result, the call through call_tool", async () => {
    const before = loop.server.chatBodies().length;
    const result = await loop.run(
      { config: { toolDiscovery: "proxy" }, messages: [{ role: "user", content: "What is in my folder?" }], ...mcp },
      turn({ toolCalls: [{ id: "l1", name: "load_tools", arguments: { names: ["list_directory"] } }] }),
      turn({ toolCalls: [{ id: "p1", name: "call_tool", arguments: { name: "list_directory", arguments: { path: folder.path } } }] }),
      turn({ content: "A notes file, a todo list and an archive folder." }),
    );
    const bodies = loop.server.chatBodies().slice(before);
    for (const body of bodies) expect((body.tools as ToolDefinition[]).map((tool) => tool.function.name)).toEqual(["call_tool", "load_tools"]);
    const [loaded, listing] = toolText(result.messages);
    expect(JSON.parse(loaded!.split("\n")[0]!)).toMatchObject({
      name: "list_directory",
      parameters: { type: "object", properties: { path: { type: "string" } } },
    });
    expect(listing!.split("\n").sort()).toEqual(["[DIR] archive", "[FILE] notes.txt", "[FILE] todo.md"]);
    expect(result.used).toEqual(["list_directory"]);
    expect(validateTranscript(result.messages)).toEqual([]);
  });

  it("turns image, embedded-resource and link content into text, and a tool error into a failed result", async () => {
    // The loop's own argument check is off, so the bad echo call reaches the server and its error comes back.
    const result = await loop.run(
      { messages: question, ...mcp, validateArguments: false },
      turn({
        toolCalls: [
          { id: "i1", name: "get-tiny-image", arguments: {} },
          { id: "r1", name: "get-resource-reference", arguments: { resourceType: "Text", resourceId: 1 } },
          { id: "k1", name: "get-resource-links", arguments: { count: 1 } },
          { id: "x1", name: "echo", arguments: {} },
        ],
      }),
      turn({ content: "Seen." }),
    );
    const [image, reference, links, failed] = result.toolCalls;
    expect(image!.ok).toBe(true);
    expect(image!.content).toMatch(/^Here's the image you requested:\n\[image image\/png, [\d.]+ kB, not shown\]\nThe image above is the MCP logo\.$/);
    expect(reference!.content).toMatch(/\[resource demo:\/\/resource\/dynamic\/text\/1 \(text\/plain\)\]\nResource 1: This is a plaintext resource/);
    expect(links!.content).toContain(
      "Here are 1 resource links to resources available in this server:\n[resource link] Blob Resource 1 <demo://resource/dynamic/blob/1> (text/plain): Resource 1: plaintext resource",
    );
    expect(failed).toMatchObject({ name: "echo", ok: false });
    expect(failed!.content).toMatch(/Invalid arguments for tool echo/);
  });

  it("hands back the server's own failed result for bad arguments, and refuses a name no server offers", async () => {
    const failure = await Promise.resolve(mcp.dispatch({ id: "z", name: "get-sum", args: { a: "two" }, raw: "" }, new AbortController().signal));
    expect(failure).toMatchObject({ isError: true });
    await expect(
      Promise.resolve().then(() => mcp.dispatch({ id: "z", name: "no-such-tool", args: {}, raw: "" }, new AbortController().signal)),
    ).rejects.toThrow('No connected MCP server offers a tool named "no-such-tool".');
  });

  it("passes the call's signal to the server: a stopped run answers the call in flight and ends", async () => {
    const stop = new AbortController();
    const run = loop.run(
      { messages: question, ...mcp, signal: stop.signal, onToolCall: () => setTimeout(() => stop.abort(new Error("the user left")), 150) },
      turn({ toolCalls: [{ id: "w1", name: "trigger-long-running-operation", arguments: { duration: 5, steps: 5 } }] }),
    );
    const error = await run.catch((caught: unknown) => caught);
    expect(AgentLoopError.is(error)).toBe(true);
    const messages = (error as AgentLoopError).run.messages;
    expect(toolText(messages)).toEqual([STOPPED_DURING_CALL]);
    const aborted = new AbortController();
    const call = Promise.resolve(mcp.dispatch({ id: "w2", name: "trigger-long-running-operation", args: { duration: 5, steps: 5 }, raw: "" }, aborted.signal));
    aborted.abort(new Error("stopped by the host"));
    await expect(call).rejects.toThrow("stopped by the host");
  });

  it("fails a call that outlasts timeoutMs with a sentence saying so", async () => {
    const quick = await connectMcpServers({ everything: everythingServer() }, { timeoutMs: 200 });
    try {
      const call = Promise.resolve(
        quick.dispatch({ id: "t", name: "trigger-long-running-operation", args: { duration: 3, steps: 3 }, raw: "" }, new AbortController().signal),
      );
      const error = await call.catch((caught: unknown) => caught);
      expect(McpServerError.is(error)).toBe(true);
      expect(error).toMatchObject({ server: "everything", problem: "timeout", tool: "trigger-long-running-operation" });
      expect((error as Error).message).toMatch(/^The MCP server "everything" did not answer the call to trigger-long-running-operation in time/);
    } finally {
      await quick.close();
    }
  });

  it("joins defined tools in one toolset, each call going to its own side", async () => {
    const shout = defineTool({ name: "shout", parameters: z.object({ text: z.string() }), execute: ({ text }) => text.toUpperCase() });
    const both = toolset([shout, mcp]);
    expect(both.catalog.map((server) => server.name)).toEqual(["tools", "everything", "files"]);
    const result = await loop.run(
      { messages: question, ...both },
      turn({
        toolCalls: [
          { id: "s1", name: "shout", arguments: { text: "hi" } },
          { id: "s2", name: "echo", arguments: { message: "hi" } },
        ],
      }),
      turn({ content: "Done." }),
    );
    expect(toolText(result.messages)).toEqual(["HI", "Echo: hi"]);
  });
});

describe("a server that exits mid-run", () => {
  it("fails the call it was answering, and every later one, with a clear message while the run goes on", async () => {
    const loop = await loopHarness();
    const notices: string[] = [];
    const mcp = await connectMcpServers({ everything: everythingServer() }, { onNotice: (text) => notices.push(text) });
    const pid = (mcp.clients.everything!.transport as unknown as { pid: number | null }).pid!;
    try {
      const result = await loop.run(
        {
          messages: question,
          ...mcp,
          onToolCall: (request) => {
            if (request.id === "c2") setTimeout(() => process.kill(pid, "SIGKILL"), 150);
          },
        },
        turn({ toolCalls: [{ id: "c1", name: "get-sum", arguments: { a: 1, b: 1 } }] }),
        turn({ toolCalls: [{ id: "c2", name: "trigger-long-running-operation", arguments: { duration: 5, steps: 5 } }] }),
        turn({ toolCalls: [{ id: "c3", name: "get-sum", arguments: { a: 2, b: 2 } }] }),
        turn({ content: "The server went away; here is what I have." }),
      );
      expect(result.turn.content).toBe("The server went away; here is what I have.");
      const [first, during, after] = result.toolCalls;
      expect(first).toMatchObject({ ok: true, content: "The sum of 1 and 1 is 2." });
      expect(during).toMatchObject({ ok: false, name: "trigger-long-running-operation" });
      expect(during!.content).toBe(
        'The MCP server "everything" closed its connection before trigger-long-running-operation answered, so the call failed; its tools cannot be used until it is connected again.',
      );
      expect(after).toMatchObject({ ok: false, content: 'The MCP server "everything" is not connected (its connection closed), so get-sum could not be run.' });
      expect(validateTranscript(result.messages)).toEqual([]);
      expect(mcp.servers[0]!.connected).toBe(false);
      expect(mcp.tools.map((tool) => tool.function.name)).toContain("get-sum");
      expect(notices).toContain('The MCP server "everything" closed its connection; calls of its tools fail until it is connected again.');
    } finally {
      await mcp.close();
      await loop.close();
    }
  });
});

describe("connectMcpServers' own errors", () => {
  it("names a server that cannot be started, and starts none", async () => {
    const error = await connectMcpServers({ everything: everythingServer(), broken: { command: "/nonexistent/mcp-server" } }).catch(
      (caught: unknown) => caught,
    );
    expect(McpServerError.is(error)).toBe(true);
    expect(error).toMatchObject({ server: "broken", problem: "connect" });
    expect((error as Error).message).toMatch(/^The MCP server "broken" could not be connected to: .*ENOENT/);
  });

  it.each([
    ["an entry with neither command nor url", { x: {} }, 'connectMcpServers: the server "x" needs a command (stdio) or a url (streamable HTTP).'],
    ["an sse server", { x: { type: "sse", url: "http://127.0.0.1:1/sse" } }, /the server "x" is of type "sse", which is not supported/],
    ["a url that is not one", { x: { url: "not a url" } }, 'connectMcpServers: the url of the server "x" is not a URL: "not a url".'],
    ["args that are not strings", { x: { command: "node", args: [1] } }, 'connectMcpServers: the args of the server "x" must be a list of strings.'],
    ["a list instead of an object", [{ command: "node" }], "connectMcpServers: expected an object of servers by name, got an array."],
  ])("refuses %s with a TypeError naming it", async (_, servers, message) => {
    await expect(connectMcpServers(servers as never)).rejects.toThrow(TypeError);
    await expect(connectMcpServers(servers as never)).rejects.toThrow(message);
  });
});
