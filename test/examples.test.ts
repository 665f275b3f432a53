/**
 * The programs in examples/ (the README quotes them) run as a user runs them: as their own
 * process, through examples/run.ts with the loopback endpoint playing the model, and the quick
 * start also straight against an endpoint this test scripts.
 */
import { describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { promisify } from "node:util";
import type { ToolDefinition } from "../src/index.js";
import { startEndpoint, turn } from "./support/endpoint.js";

const root = resolve(import.meta.dirname, "..");
const examples = readdirSync(resolve(root, "examples"))
  .filter((file) => file.endsWith(".ts") && file !== "run.ts")
  .map((file) => file.replace(/\.ts$/, ""))
  .sort();

/** Runs a file under examples/ with this Node and tsx, from the repository root. */
async function node(args: string[], env: Record<string, string | undefined> = {}): Promise<{ stdout: string; stderr: string }> {
  const { AGENT_CORE_BASE_URL: _url, AGENT_CORE_MODEL: _model, ...inherited } = process.env;
  return promisify(execFile)(process.execPath, ["--import", "tsx", ...args], {
    cwd: root,
    env: { ...inherited, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`, ...env },
    timeout: 90_000,
  });
}

describe("the examples", () => {
  it("are the quick start and the MCP program", () => {
    expect(examples).toEqual(["mcp", "quick-start"]);
  });

  it("keeps the quick start within 25 lines, quoted whole in the README", () => {
    const program = readFileSync(resolve(root, "examples/quick-start.ts"), "utf8").trimEnd();
    expect(program.split("\n").length).toBeLessThanOrEqual(25);
    expect(readFileSync(resolve(root, "README.md"), "utf8")).toContain(`This is \`examples/quick-start.ts\``);
    expect(readFileSync(resolve(root, "README.md"), "utf8")).toContain(`\`\`\`ts\n${program}\n\`\`\``);
  });

  it.each(examples)(
    "runs %s against the loopback endpoint playing the model",
    async (example) => {
      const { stdout } = await node(["examples/run.ts", example]);
      expect(stdout).toContain("(played by the loopback endpoint) The last tool said:");
      if (example === "quick-start") expect(stdout.trim().split("\n").at(-1)).toBe("Lisbon: 21°C and clear");
      if (example === "mcp") {
        expect(stdout).toContain('[load_tools] {"name":"list_directory"');
        expect(stdout).toMatch(/\[list_directory\] \[FILE\] \S+\.ts/);
        expect(stdout).toContain("[FILE] quick-start.ts");
      }
    },
    120_000,
  );

  it("runs the quick start as written against a server given by AGENT_CORE_BASE_URL", async () => {
    const server = await startEndpoint({ profile: "vllm" });
    try {
      server.script(turn({ toolCalls: [{ name: "get_weather", arguments: { city: "Porto" } }] }), turn({ content: "Porto is 21°C and clear." }));
      const { stdout } = await node(["examples/quick-start.ts"], { AGENT_CORE_BASE_URL: server.baseUrl, AGENT_CORE_MODEL: "loopback-model" });
      expect(stdout.trim()).toBe("Porto is 21°C and clear.");
      const [first, second] = server.chatBodies();
      expect((first!.tools as ToolDefinition[])[0]!.function).toMatchObject({
        name: "get_weather",
        parameters: { type: "object", properties: { city: { type: "string", description: "The city's name" } }, required: ["city"] },
      });
      expect(second!.messages).toContainEqual({ role: "tool", tool_call_id: "call_0", content: "Porto: 21°C and clear" });
    } finally {
      await server.close();
    }
  }, 120_000);

  it("says which examples there are when asked for one that does not exist", async () => {
    const failed = await node(["examples/run.ts", "nope"]).catch((error: { code?: number; stderr?: string }) => error);
    expect(failed).toMatchObject({ code: 2 });
    expect((failed as { stderr: string }).stderr).toContain('examples/run.ts: no example named "nope"; the examples are quick-start, mcp.');
  }, 60_000);
});
