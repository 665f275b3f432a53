/**
 * The everything reference server over streamable HTTP: started by the test on a free loopback
 * port, reached with connectMcpServers({ url }), and stopped by its PID.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { connectMcpServers, type McpConnection } from "../../src/mcp.js";
import { turn } from "../support/endpoint.js";
import { loopHarness, type LoopHarness } from "./servers.js";

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, "127.0.0.1", done));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((done) => probe.close(() => done()));
  return port;
}

async function startHttpServer(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const script = realpathSync(resolve(import.meta.dirname, "../../node_modules/.bin/mcp-server-everything"));
  const child = spawn(process.execPath, [script, "streamableHttp"], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
  await new Promise<void>((ready, fail) => {
    let said = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      said += chunk.toString();
      if (said.includes("listening on port")) ready();
    });
    child.once("exit", (code) => fail(new Error(`the everything server exited (${code}) before listening: ${said}`)));
  });
  child.stderr!.resume();
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

describe("connectMcpServers over streamable HTTP", () => {
  let server: { url: string; child: ChildProcess };
  let mcp: McpConnection;
  let loop: LoopHarness;

  beforeAll(async () => {
    server = await startHttpServer();
    loop = await loopHarness();
    mcp = await connectMcpServers({ remote: { url: server.url, label: "Everything, over HTTP" } });
  });

  afterAll(async () => {
    await mcp?.close();
    await loop?.close();
    if (server?.child.exitCode === null) {
      const exited = new Promise((done) => server.child.once("exit", done));
      server.child.kill("SIGKILL");
      await exited;
    }
  });

  it("lists the remote server's tools and runs a call on it", async () => {
    expect(mcp.catalog[0]).toMatchObject({ name: "remote", label: "Everything, over HTTP" });
    const result = await loop.run(
      { config: { toolDiscovery: "ondemand" }, messages: [{ role: "user", content: "Add 40 and 2." }], ...mcp },
      turn({ toolCalls: [{ id: "s1", name: "get-sum", arguments: { a: 40, b: 2 } }] }),
      turn({ content: "42." }),
    );
    expect(result.toolCalls[0]).toMatchObject({ name: "get-sum", ok: true, content: "The sum of 40 and 2 is 42." });
  });
});
