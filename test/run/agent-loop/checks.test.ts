import { describe, expect, it } from "vitest";
import { z } from "zod";
import { runAgentLoopIn } from "../../../src/run/agent-loop.js";
import { defineTool, toolset } from "../../../src/run/define-tool.js";
import type { RunEventInput } from "../../../src/run/events.js";
import { clearState, createState } from "../../../src/state/state.js";
import { startEndpoint, turn } from "../../support/endpoint.js";

describe("the step's argument check", () => {
  it("tells and counts a zod tool's bad arguments like a JSON-Schema tool's: one invalid-arguments event each", async () => {
    const ran: string[] = [];
    const typed = defineTool({
      name: "typed",
      parameters: z.object({ count: z.number().int() }),
      execute: ({ count }) => void ran.push(`typed ${count}`),
    });
    const plain = defineTool({
      name: "plain",
      parameters: { type: "object", properties: { count: { type: "integer" } }, required: ["count"] },
      execute: (args) => void ran.push(`plain ${JSON.stringify(args)}`),
    });
    const server = await startEndpoint({ profile: "vllm" });
    const state = createState();
    try {
      server.script(
        turn({
          toolCalls: [
            { name: "typed", arguments: { count: "three" }, id: "call_typed" },
            { name: "plain", arguments: { count: "three" }, id: "call_plain" },
          ],
        }),
        turn({ content: "Both were refused." }),
      );
      const events: RunEventInput[] = [];
      const result = await runAgentLoopIn(state, {
        config: { baseUrl: server.baseUrl, model: "m", maxRetries: 0 },
        messages: [{ role: "user", content: "Count to three." }],
        ...toolset([typed, plain]),
        onEvent: (event) => void events.push(event),
      });
      const invalid = events.filter((event) => event.kind === "invalid-arguments");
      expect(invalid.map((event) => (event as { name: string }).name)).toEqual(["typed", "plain"]);
      expect(result.metrics.invalidArguments).toBe(2);
      expect(ran).toEqual([]);
      const answers = result.messages.filter((message) => message.role === "tool").map((message) => String(message.content));
      expect(answers).toHaveLength(2);
      for (const answer of answers) expect(answer).toMatch(/^The arguments for (typed|plain) do not match its parameters, so it was not run:\n- count: /);
    } finally {
      clearState(state);
      await server.close();
    }
  });

  it("lets good arguments through to a zod tool, parsed by its schema", async () => {
    const ran: number[] = [];
    const typed = defineTool({ name: "typed", parameters: z.object({ count: z.coerce.number() }), execute: ({ count }) => void ran.push(count) });
    const server = await startEndpoint({ profile: "vllm" });
    const state = createState();
    try {
      server.script(turn({ toolCalls: [{ name: "typed", arguments: { count: "3" }, id: "call_1" }] }), turn({ content: "Done." }));
      const result = await runAgentLoopIn(state, {
        config: { baseUrl: server.baseUrl, model: "m", maxRetries: 0 },
        messages: [{ role: "user", content: "Count." }],
        ...toolset([typed]),
      });
      expect(ran).toEqual([3]);
      expect(result.metrics.invalidArguments).toBe(0);
    } finally {
      clearState(state);
      await server.close();
    }
  });
});
