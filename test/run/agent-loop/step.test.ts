import { describe, expect, it } from "vitest";
import type { ToolDefinition } from "../../../src/shapes/config.js";
import { runAgentLoopIn } from "../../../src/run/agent-loop.js";
import { clearState, createState } from "../../../src/state/state.js";
import { sanitizeTools } from "../../../src/text/schema-compat.js";
import { toolTokens } from "../../../src/text/tokens.js";
import { charsPerTokenForIn } from "../../../src/wire/calibration.js";
import { capabilitiesForIn } from "../../../src/wire/capabilities.js";
import { startEndpoint, turn } from "../../support/endpoint.js";

const tool = (name: string, properties: Record<string, unknown> = { path: { type: "string" } }): ToolDefinition => ({
  type: "function",
  function: { name, description: `Does ${name}.`, parameters: { type: "object", properties } },
});

const namesSent = (body: Record<string, unknown>): string[] => ((body.tools ?? []) as ToolDefinition[]).map((entry) => entry.function.name);

describe("a step's tools", () => {
  it("declares a tool a host pushed onto the same tools array between two runs, in the next run's first request", async () => {
    const server = await startEndpoint({ profile: "openai" });
    const state = createState();
    try {
      const tools = [tool("read")];
      const runOnce = () =>
        runAgentLoopIn(state, {
          config: { baseUrl: server.baseUrl, model: "m", maxRetries: 0 },
          messages: [{ role: "user", content: "Read a." }],
          tools,
          dispatch: () => "contents",
        });
      server.script(turn({ toolCalls: [{ name: "read", arguments: { path: "a" }, id: "call_a" }] }), turn({ content: "Done." }));
      await runOnce();
      tools.push(tool("append", { path: { type: "string" }, text: { type: "string" } }));
      tools[0]!.function.parameters = { type: "object", properties: { path: { type: "string" }, lines: { type: "integer" } } };
      server.script(turn({ content: "Nothing to do." }));
      const second = await runOnce();
      const bodies = server.chatBodies();
      expect(bodies.map(namesSent)).toEqual([["read"], ["read"], ["append", "read"]]);
      expect(JSON.stringify(bodies[2]!.tools)).toBe(JSON.stringify(sanitizeTools([tools[1]!, tools[0]!])));
      // The usage counts read the same declared tools.
      const charsPerToken = charsPerTokenForIn(state, capabilitiesForIn(state, server.baseUrl), "m");
      expect(second.metrics.turnMetrics[0]!.toolSchemaTokens).toBe(toolTokens(bodies[2]!.tools as ToolDefinition[], { charsPerToken }));
      expect(second.metrics.turnMetrics[0]!.toolsDeclared).toBe(2);
    } finally {
      clearState(state);
      await server.close();
    }
  });
});
